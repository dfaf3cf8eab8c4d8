// The fixed material DemoCatalog draws from: the category tree with its product families, the
// spec kinds (template labels, values, kit contents, description sentences) and manufacturers.

extension DemoCatalog {
    /// The category tree, two spaces per level (level 1 = top). A node line is `Title | icon`
    /// (icon may be empty). A line starting with `@` files a product family under the node above
    /// it: `@ Manufacturer ; kind ; name pattern`, where `{a,b,c}` in the pattern expands to one
    /// product per alternative (several groups multiply).
    static let tree = """
    Cameras | icon_cameras.png
      Digital Cinema | icon_digital_cinema.png
        ARRI | icon_arri.png
          Alexa 35 |
            @ ARRI ; camera ; ARRI Alexa 35 {Base Package,Production Set,Premium License Set}
          Alexa Mini LF |
            @ ARRI ; camera ; ARRI Alexa Mini LF {Base Package,Production Set,Steadicam Build}
            @ ARRI ; camera ; ARRI Alexa LF {Base Package,Studio Build}
            @ ARRI ; camera ; ARRI Alexa SXT W
          Alexa Mini |
            @ ARRI ; camera ; ARRI Alexa Mini {Base Package,4:3 Open Gate,Handheld Build}
        RED | icon_red.png
          V-Raptor |
            @ RED ; camera ; RED V-Raptor {8K VV,XL 8K VV,8K S35}
          Komodo |
            @ RED ; camera ; RED Komodo{ 6K,-X 6K}
          DSMC2 |
            @ RED ; camera ; RED DSMC2 {Monstro 8K VV,Helium 8K S35,Gemini 5K S35}
        Sony |
          Venice |
            @ Sony ; camera ; Sony Venice {6K,2 8K,2 6K,Rialto Extension}
            @ Sony ; camera ; Sony Burano {8K,Production Set}
          FX Series |
            @ Sony ; camera ; Sony {FX9,FX6,FX3,FR7 PTZ}
        Canon |
          @ Canon ; camera ; Canon EOS {C500 Mk II,C300 Mk III,C70,C400,C80,R5 C}
        Blackmagic |
          @ Blackmagic Design ; camera ; Blackmagic {URSA Mini Pro 12K,URSA Cine 12K,Pocket 6K Pro,PYXIS 6K}
      Film Cameras | icon_film.png
        35mm |
          @ ARRI ; camera ; ARRICAM {LT,ST}
          @ ARRI ; camera ; ARRI {435 Xtreme,235,535B}
          @ Panavision ; camera ; Panavision {Millennium XL2,Panaflex Platinum}
        16mm |
          @ ARRI ; camera ; ARRI 416 {Plus,Plus HS}
          @ Aaton ; camera ; Aaton {XTR Prod,A-Minima}
        Film Magazines |
          @ ARRI ; generic ; ARRI {ARRICAM 400ft Magazine,ARRICAM 1000ft Magazine,416 400ft Magazine}
      Specialty Cameras | icon_specialty.png
        High Speed |
          @ Phantom ; camera ; Phantom {Flex4K,VEO 4K 990,TMX 7510}
          @ Freefly ; camera ; Freefly Ember S5K
          @ Kinefinity ; camera ; Kinefinity MAVO Edge 6K
          @ Z CAM ; camera ; Z CAM E2-{F6,S6,M4}
        Underwater Housings |
          @ Hydroflex ; generic ; Hydroflex {Alexa Mini LF Housing,Venice Housing,V-Raptor Housing}
    Lenses | icon_lenses.png
      Primes | icon_primes.png
        Cooke |
          S4/i |
            @ Cooke ; prime ; Cooke S4/i {12,14,16,18,21,25,27,32,35,40,50,65,75,100,135}mm
          Panchro/i Classic |
            @ Cooke ; prime ; Cooke Panchro/i Classic {18,25,32,40,50,75,100}mm
            @ Cooke ; prime ; Cooke 5/i {18,25,32,40,50,65,75,100}mm
        ARRI Zeiss |
          Master Primes |
            @ ARRI ; prime ; ARRI Zeiss Master Prime {14,16,18,21,25,27,32,35,40,50,65,75,100,135}mm
          Ultra Primes |
            @ ARRI ; prime ; ARRI Zeiss Ultra Prime {16,20,24,28,32,40,50,65,85,100}mm
          Signature Primes |
            @ ARRI ; prime ; ARRI Signature Prime {18,21,25,29,35,40,47,58,75,95,125}mm
        Leitz |
          @ Leitz ; prime ; Leitz Summilux-C {16,18,21,25,29,35,40,50,65,75,100}mm
          @ Leitz ; prime ; Leitz Summicron-C {15,18,21,25,29,35,40,50,75,100}mm
          @ Leitz ; prime ; Leitz Thalia {24,30,35,45,55,70,90,100,120,180}mm
        Zeiss |
          @ Zeiss ; prime ; Zeiss Supreme Prime {15,18,21,25,29,35,50,65,85,100}mm
          @ Zeiss ; prime ; Zeiss CP.3 {15,18,21,25,28,35,50,85,100,135}mm
        Vintage Primes |
          @ Canon ; prime ; Canon K35 {18,24,35,55,85}mm
          @ Zeiss ; prime ; Zeiss Super Speed Mk II {18,25,35,50,85}mm
      Zooms | icon_zooms.png
        Angenieux |
          @ Angenieux ; zoom ; Angenieux Optimo {15-40mm,28-76mm,45-120mm,Ultra 12x 24-290mm,Style 16-40mm,Style 25-250mm}
          @ Angenieux ; zoom ; Angenieux EZ-{1 30-90mm,2 15-40mm}
        Fujinon |
          @ Fujinon ; zoom ; Fujinon Premista {19-45mm,28-100mm,80-250mm}
          @ Fujinon ; zoom ; Fujinon Cabrio {19-90mm,25-300mm,85-300mm}
        ARRI Zooms |
          @ ARRI ; zoom ; ARRI Alura {15.5-45mm,18-80mm,30-80mm,45-250mm}
        Canon Zooms |
          @ Canon ; zoom ; Canon CN-E {14.5-60mm,30-300mm,15.5-47mm,30-105mm}
      Anamorphic | icon_anamorphic.png
        Cooke Anamorphic |
          @ Cooke ; anamorphic ; Cooke Anamorphic/i {25,32,40,50,75,100,135}mm
        Atlas |
          @ Atlas Lens Co ; anamorphic ; Atlas Orion {25,32,40,50,65,80,100}mm
        Hawk |
          @ Hawk ; anamorphic ; Hawk V-Lite {28,35,45,55,65,80}mm
        Panavision Anamorphic |
          @ Panavision ; anamorphic ; Panavision C-Series {35,40,50,75,100}mm
      Specialty Lenses | icon_specialty_lenses.png
        Probe |
          @ Laowa ; prime ; Laowa 24mm f/14 Probe{, Periscope}
          @ Innovision ; prime ; Innovision Probe II+
        Macro |
          @ Zeiss ; prime ; Zeiss Makro-Planar {50,100}mm
          @ Canon ; prime ; Canon CN-E {50,100}mm Macro
          @ Canon ; prime ; Canon TS-E {24,50,90}mm
      Lens Accessories |
        @ ARRI ; generic ; ARRI {PL to LPL Adapter,LMB 4x5 Matte Box,LMB-25 Clamp Adapter}
        @ Wooden Camera ; generic ; Wooden Camera {PL Mount Adapter,Lens Support}
        @ Tilta ; generic ; Tilta {Lens Gear Set,Mirage Matte Box}
    Filters | icon_filters.png
      4x5.65 | icon_4x5.png
        ND |
          @ Tiffen ; filter ; Tiffen 4x5.65 ND {.3,.6,.9,1.2,1.5,1.8,2.1,2.4}
        IR ND |
          @ Schneider ; filter ; Schneider 4x5.65 Platinum IRND {.3,.6,.9,1.2,1.5,1.8,2.1}
        Diffusion |
          @ Tiffen ; filter ; Tiffen 4x5.65 Black Pro-Mist {1/8,1/4,1/2,1}
          @ Tiffen ; filter ; Tiffen 4x5.65 Glimmerglass {1,2,3}
          @ Schneider ; filter ; Schneider 4x5.65 Hollywood Black Magic {1/8,1/4,1/2}
        Polarizers |
          @ Tiffen ; filter ; Tiffen 4x5.65 {Rotating,Linear} Polarizer
          @ Formatt-Hitech ; filter ; Formatt 4x5.65 ND Grad {.3,.6,.9} {Soft,Hard} Edge
      6.6x6.6 | icon_66.png
        @ Tiffen ; filter ; Tiffen 6.6x6.6 ND {.3,.6,.9,1.2}
        @ Schneider ; filter ; Schneider 6.6x6.6 {Classic Soft 1/4,Classic Soft 1/2,True-Streak Blue}
      Round Filters |
        @ Tiffen ; filter ; Tiffen 138mm {ND .6,Pola,Black Pro-Mist 1/4}
        @ NiSi ; filter ; NiSi {95mm Variable ND,82mm True Color ND}
      Filter Trays |
        @ ARRI ; generic ; ARRI {FSND Filter Tray,4x5.65 Filter Tray}
        @ Bright Tangerine ; generic ; Bright Tangerine Misfit {Atom,Kick} Filter Tray
    Lighting | icon_lighting.png
      LED | icon_led.png
        Panels |
          @ Creamsource ; light ; Creamsource Vortex{4,8,24}
          ARRI SkyPanel |
            @ ARRI ; light ; ARRI SkyPanel {S30-C,S60-C,S120-C,S360-C,X21,X23}
          Litepanels Gemini |
            @ Litepanels ; light ; Litepanels Gemini {1x1 Hard,2x1 Soft,2x1 Hard}
        Fresnels |
          @ ARRI ; light ; ARRI L{5-C,7-C,10-C} LED Fresnel
          @ Mole-Richardson ; light ; Mole-Richardson {BabyMole LED,Baby-Baby LED}
        Tubes |
          @ Astera ; light ; Astera {Titan Tube,Helios Tube,Hyperion Tube} {Set of 8,Set of 4}
          @ Quasar Science ; light ; Quasar Science Rainbow 2 {2ft,4ft}
        Point Source |
          @ Aputure ; light ; Aputure {LS 600d Pro,LS 1200d Pro,Nova P600c,STORM 1200x,MC Pro Kit of 8,Amaran F22c}
          @ ARRI ; light ; ARRI Orbiter
          @ Nanlux ; light ; Nanlux Evoke {1200,2400B}
      HMI | icon_hmi.png
        HMI Fresnels |
          @ ARRI ; light ; ARRI {M18,M40,M90,True Blue T12} HMI
          @ ARRI ; light ; ARRIMAX 18/12
        PARs |
          @ ARRI ; light ; ARRI {Pocket PAR 125,Pocket PAR 400,ARRISUN 12} PAR
          @ K5600 ; light ; K5600 Joker {400,800,1600}
      Tungsten | icon_tungsten.png
        Tungsten Fresnels |
          @ Mole-Richardson ; light ; Mole-Richardson {Tweenie 650W,Baby Junior 2K,Senior 5K,Tener 10K}
          @ ARRI ; light ; ARRI T{1,2,5,12,24} Fresnel
        Open Face |
          @ Lowel ; light ; Lowel {Omni,DP,Tota}-light
          @ Mole-Richardson ; light ; Mole-Richardson {Mighty Mole,Nook Light}
      Light Control | icon_light_control.png
        Flags & Nets |
          @ Matthews ; grip ; Matthews {18x24,24x36,48x48} {Solid Flag,Single Net,Double Net}
        Diffusion Frames |
          @ Modern Studio ; grip ; Modern Studio {6x6,8x8,12x12,20x20} Frame
          @ Modern Studio ; grip ; {6x6,8x8,12x12,20x20} {Ultrabounce,Full Grid Cloth,Silk}
        Softboxes |
          @ Chimera ; light ; Chimera {Daylite Junior,Video Pro Plus} {Small,Medium,Large}
          @ DoP Choice ; light ; DoP Choice Snapbag {SkyPanel S60,SkyPanel S30}
      Dimmers & Control |
        @ LumenRadio ; generic ; LumenRadio {CRMX TimoTwo,Aurora Transmitter}
        @ ETC ; generic ; ETC {Ion Xe,Nomad Puck}
    Grip | icon_grip.png
      Stands | icon_stands.png
        C-Stands |
          @ Matthews ; grip ; Matthews {20in,30in,40in} C-Stand{, Turtle Base}
        Combo Stands |
          @ Matthews ; grip ; Matthews {Baby,Junior,Senior} Combo Stand
          @ American Grip ; grip ; American Grip {Combo Steel Stand,Overhead Stand}
          @ Mole-Richardson ; grip ; Mole-Richardson {Low Roller,High Roller,Super Crank}
      Rigging | icon_rigging.png
        Clamps |
          @ Matthews ; grip ; Matthews {Cardellini,Mafer,Chain Vise Grip,Pipe Clamp}{, Kit}
          @ Avenger ; grip ; Avenger {C1575 Super Clamp,D200 Pin,D520 Wall Spreader,F800 Baby Plate}
        Speed Rail |
          @ Modern Studio ; grip ; Speed Rail 1-1/4in {4ft,6ft,8ft,10ft,12ft}
      Dollies | icon_dollies.png
        @ J.L. Fisher ; grip ; J.L. Fisher Model {10,11} Dolly
        @ Chapman/Leonard ; grip ; Chapman {PeeWee IV,Hybrid IV} Dolly
        @ Panther ; grip ; Panther Bravo Dolly
        @ Dana Dolly ; grip ; Dana Dolly {Kit,Rental Kit,Track Extension}
      Cranes & Jibs |
        @ Technocrane ; grip ; Technocrane {15ft,22ft,30ft}
        @ Jimmy Jib ; grip ; Jimmy Jib {Lite,Triangle}
      Car Mounts |
        @ Matthews ; grip ; Matthews {Hostess Tray,Hood Mount}{, Kit}
        @ Modern Studio ; grip ; Modern Studio Suction Cup {6in,10in}
    Monitors | icon_monitors.png
      On-Board |
        @ SmallHD ; monitor ; SmallHD {Cine 7,Indie 7,Ultra 7,Smart 5}
        @ ARRI ; monitor ; ARRI {EVF-2 Viewfinder,MVF-2 Viewfinder}
      Director's Monitors |
        @ SmallHD ; monitor ; SmallHD {Cine 24,Cine 13,1303 HDR}
        @ Flanders Scientific ; monitor ; Flanders Scientific {DM241,XM312U,AM211}
        @ Sony ; monitor ; Sony {PVM-A250,BVM-HX310}
        @ TVLogic ; monitor ; TVLogic {LVM-171S,F-7H}
      Wireless Video |
        Teradek |
          @ Teradek ; monitor ; Teradek {Bolt 4K 1500,Bolt 6 XT 1500,Bolt 6 XT 3000,Bolt 6 LT 750} {TX/RX Set,RX Only}
        Hollyland |
          @ Hollyland ; monitor ; Hollyland {Mars 4K,Cosmo C1}
      Recorders |
        @ Atomos ; monitor ; Atomos {Shogun 7,Ninja V+,Shinobi}
        @ Blackmagic Design ; monitor ; Blackmagic Video Assist {7in 12G,5in 12G}
    Power | icon_power.png
      Batteries |
        V-Mount |
          @ Core SWX ; battery ; Core SWX Helix {Max 98Wh,Max 150Wh,Micro 98Wh,Max 360Wh}
          @ IDX ; battery ; IDX {Duo-C98,Duo-C150,Imicro-98}
        Gold Mount |
          @ Anton/Bauer ; battery ; Anton/Bauer {Titon 90,Titon 150,Dionic XT 150,Dionic 26V 98}
        Block Batteries |
          @ Hawk-Woods ; battery ; Hawk-Woods {BP-2X 24V,X-Block 30V}
          @ Bebob ; battery ; Bebob {B290,B480} Cine
      Distribution |
        @ Core SWX ; power ; Core SWX {PowerVerse,GP-3S Gold Mount Plate}
        @ Modern Studio ; power ; {100A Bullswitch,60A Lunchbox,Spider Box 100A,Camlok Banded 50ft,Stinger 25ft,Stinger 50ft}
      Generators |
        @ Honda ; power ; Honda {EU7000is,EU3000is,EU2200i}
        @ Yamaha ; power ; Yamaha EF{2000iSv2,6300iSDE}
      Chargers |
        @ Core SWX ; battery ; Core SWX Fleet {Q,Dual} Charger
        @ Anton/Bauer ; battery ; Anton/Bauer LP{2,4} Charger
    Audio | icon_audio.png
      Wireless Mics |
        @ Lectrosonics ; audio ; Lectrosonics {SMWB,SRc Dual Receiver,DCHT Stereo TX,LT Transmitter}
        @ Sennheiser ; audio ; Sennheiser {EW-DX,EW 112P G4,MKE 2 Lavalier}
        @ DPA ; audio ; DPA {4060,6060} Lavalier
      Recorders & Mixers |
        @ Sound Devices ; audio ; Sound Devices {888,833,MixPre-10 II,Scorpio}
        @ Zaxcom ; audio ; Zaxcom {Nova,Maxx}
      Boom Poles & Mics |
        @ Ambient ; audio ; Ambient QuickPole {QP 460,QP 5100}
        @ K-Tek ; audio ; K-Tek {KEG-150CCR,KE-110CCR}
        @ Schoeps ; audio ; Schoeps {CMIT 5U,MK41 Supercardioid}
        @ Sennheiser ; audio ; Sennheiser MKH {416,50,8060,60}
      Timecode |
        @ Tentacle Sync ; audio ; Tentacle Sync {E Set of 4,Track E}
        @ Ambient ; audio ; Ambient {Lockit ACL 204,Master Lockit}
        @ Deity ; audio ; Deity {TC-1 Kit of 3,TC-SL1 Smart Slate}
    Support | icon_support.png
      Tripods |
        Heads |
          @ OConnor ; support ; OConnor {2575D,2560,1030Ds,120EX} Fluid Head
          @ Sachtler ; support ; Sachtler {Video 18 S2,Cine 30 HD}
          @ Cartoni ; support ; Cartoni {Lambda 25,Maxima 30}
          @ Manfrotto ; support ; Manfrotto {504X,509HD} Fluid Head
          @ ARRI ; support ; ARRI Arrihead 2
        Legs |
          @ OConnor ; support ; OConnor {Standard,Baby} Legs {150mm,Mitchell}
          @ Ronford-Baker ; support ; Ronford-Baker {Heavy Duty Standard,Heavy Duty Baby,Hi Hat}
      Gimbals |
        @ DJI ; support ; DJI {Ronin 2,RS 4 Pro,Ronin 4D Flex}
        @ Freefly ; support ; Freefly {MoVI Pro,MoVI XL}
        @ ARRI ; support ; ARRI {Trinity 2,Artemis 2 Live}
        @ Easyrig ; support ; Easyrig {Vario 5,Minimax,Flowcine Serene}
      Sliders |
        @ Dana Dolly ; support ; Dana Dolly Slider {3ft,5ft}
        @ Edelkrone ; support ; Edelkrone {SliderPLUS Pro,HeadPLUS Pro}
      Focus & Control |
        Follow Focus |
          @ Preston ; focus ; Preston {FIZ 4 Hand Unit,MDR-4,DM2X Motor,Light Ranger 2}
          @ ARRI ; focus ; ARRI {WCU-4,Hi-5,UMC-4,cforce mini RF}
          @ cmotion ; focus ; cmotion {cPRO Hand Unit,cforce mini motor,cPRO lens control kit}
          @ Tilta ; focus ; Tilta Nucleus-{M,Nano II}
          @ ARRI ; focus ; ARRI {FF-5,FF-4} Follow Focus
          @ Chrosziel ; focus ; Chrosziel {DV Studio Rig,FF Sparrow}
        Matte Boxes |
          @ ARRI ; generic ; ARRI {LMB-6,MB-19,MB-20,SMB-2} Matte Box
          @ Bright Tangerine ; generic ; Bright Tangerine {Strummer DNA,Misfit Kick}
    """

    /// Rows that hang off nothing or loop, with their level: seven orphans (their parent id
    /// belongs to a deleted node), one child of an orphan, a two-node cycle and a self-parent.
    static let orphanTitles = [
        ("Discontinued", 2), ("Sale Items", 2), ("Old Lens Packages", 3), ("Archive 2012", 2),
        ("Test Category", 3), ("Consignment", 2), ("Demo Stock", 4),
    ]
    static let orphanChildTitle = ("Anamorphic Sets", 4)
    static let cycleTitles = [("Specials", 2), ("Specials Archive", 3)]
    static let selfParentTitle = ("Clearance", 2)

    /// One spec label of a kind with the values products draw from.
    struct Spec: Sendable {
        let label: String
        let values: [String]
    }

    /// What a family of products is: its spec template, kit contents and description sentences.
    struct Kind: Sendable {
        let name: String
        let reference: String
        let specs: [Spec]
        let assets: [String]
        let blurbs: [String]
    }

    static let kinds: [Kind] = [
        Kind(name: "camera", reference: "Cameras", specs: [
            Spec(label: "Sensor", values: ["Super 35", "Large Format", "Full Frame", "S35 4:3", "Super 16"]),
            Spec(label: "Resolution", values: ["4.6K", "6K", "8K", "3.4K", "2.8K", "12K"]),
            Spec(label: "Lens Mount", values: ["PL", "LPL", "EF", "E-mount", "PV"]),
            Spec(label: "Weight", values: ["2.6 kg", "3.8 kg", "1.9 kg", "4.5 kg", "7.1 kg"]),
            Spec(label: "Recording Media", values: ["Codex Compact Drive", "CFast 2.0", "RED Mini-Mag", "AXS Card", "CFexpress B"]),
            Spec(label: "Frame Rates", values: ["0.75-120 fps", "1-60 fps", "1-240 fps", "1-90 fps"]),
            Spec(label: "Power", values: ["24V", "12V / 24V", "14.4V", "11-34V DC"]),
            Spec(label: "Outputs", values: ["2x 12G-SDI", "3x SDI, 1x HDMI", "SDI, HDMI", "4x 3G-SDI"]),
        ], assets: [
            "Camera Body", "Top Handle", "Viewfinder, EVF ", "Viewfinder Cable", "Baseplate, 15mm LWS",
            "Battery Plate, V-Mount ", "Battery, V-Mount 98Wh", "Power Cable, 2-pin 24V",
            "Media, 1TB", "Media, 2TB ", "Media Reader, USB-C", "Lens Mount Adapter, PL",
            "Sunshade", "Rain Cover", "Case, Pelican 1650", "Timecode Cable, 5-pin Lemo",
            "Monitor Cable, 3G-SDI 3ft", "Rod Set, 15mm 12in", "Shoulder Pad", "Cheese Plate ",
        ], blurbs: [
            "Complete digital cinema package, prepped and tested by our camera department.",
            "Large-format sensor with internal ND filters.",
            "Ships with two recording media and a reader.",
            "Lightweight body for gimbal, drone and handheld work.",
            "Includes ProRes and raw recording licences.",
        ]),
        Kind(name: "prime", reference: "Lenses", specs: [
            Spec(label: "Focal Length", values: ["18mm", "25mm", "32mm", "40mm", "50mm", "75mm", "100mm"]),
            Spec(label: "T-Stop", values: ["T1.3", "T1.4", "T1.9", "T2.0", "T2.1", "T2.8"]),
            Spec(label: "Close Focus", values: ["0.35 m / 14in", "0.45 m / 18in", "0.7 m / 2ft 3in", "0.25 m / 10in"]),
            Spec(label: "Front Diameter", values: ["95mm", "110mm", "114mm", "80mm"]),
            Spec(label: "Weight", values: ["1.2 kg", "1.6 kg", "2.0 kg", "0.9 kg", "2.6 kg"]),
            Spec(label: "Mount", values: ["PL", "LPL", "PV", "EF"]),
            Spec(label: "Image Circle", values: ["31.1mm", "44.7mm", "46.3mm", "36mm"]),
        ], assets: [
            "Lens", "Front Cap", "Rear Cap, PL", "Lens Case", "Focus Gear, 0.8 ", "Lens Support",
            "Lens Data Cable", "Lens Shim Set", "Lens Cloth", "Witness Mark Chart",
            "Rear Net Holder", "Lens Tissue", "Desiccant Pack", "Focus Chart, 8x10",
            "Lens Test Report", "Step-up Ring, 95-114mm",
        ], blurbs: [
            "Matched cine prime with consistent colour across the set.",
            "Sharp wide open with smooth, organic fall-off.",
            "Lens data contacts for metadata and shading correction.",
            "Projected and collimated before every rental.",
        ]),
        Kind(name: "zoom", reference: "Lenses", specs: [
            Spec(label: "Focal Range", values: ["15-40mm", "28-76mm", "24-290mm", "19-90mm", "30-300mm"]),
            Spec(label: "T-Stop", values: ["T2.6", "T2.8", "T2.9", "T3.5", "T4.4"]),
            Spec(label: "Close Focus", values: ["0.6 m / 2ft", "1.22 m / 4ft", "0.85 m / 2ft 9in"]),
            Spec(label: "Front Diameter", values: ["136mm", "114mm", "162mm", "95mm"]),
            Spec(label: "Weight", values: ["1.9 kg", "2.7 kg", "11 kg", "4.4 kg"]),
            Spec(label: "Mount", values: ["PL", "LPL", "EF"]),
            Spec(label: "Length", values: ["198mm", "230mm", "440mm", "210mm"]),
        ], assets: [
            "Lens", "Front Cap", "Rear Cap, PL", "Lens Case, Hard", "Zoom Gear, 0.8 ",
            "Lens Support, 15mm", "Lens Support Bracket, 19mm", "Servo Drive Unit",
            "Servo Zoom Demand", "Zoom Demand Cable", "Focus Gear", "Iris Gear",
            "Lens Cloth", "Desiccant Pack", "Rain Cover", "Lens Test Report",
        ], blurbs: [
            "Cine zoom that intercuts with the matching primes.",
            "Holds focus through the zoom range.",
            "Servo drive available for broadcast-style operation.",
        ]),
        Kind(name: "anamorphic", reference: "Lenses", specs: [
            Spec(label: "Focal Length", values: ["32mm", "40mm", "50mm", "75mm", "100mm"]),
            Spec(label: "Squeeze", values: ["2x", "1.8x", "1.5x", "1.3x"]),
            Spec(label: "T-Stop", values: ["T2.0", "T2.3", "T2.8"]),
            Spec(label: "Close Focus", values: ["0.65 m / 2ft 2in", "0.85 m / 2ft 9in", "0.9 m / 3ft"]),
            Spec(label: "Front Diameter", values: ["110mm", "114mm", "95mm"]),
            Spec(label: "Weight", values: ["2.4 kg", "3.0 kg", "2.0 kg"]),
            Spec(label: "Mount", values: ["PL", "PV"]),
        ], assets: [
            "Lens", "Front Cap", "Rear Cap, PL", "Lens Case", "Focus Gear, 0.8 ", "Lens Support",
            "Anamorphic Desqueeze LUT", "Lens Cloth", "Desiccant Pack", "Lens Test Report",
            "Flare Kit", "Rear Net Holder", "Iris Gear", "Shim Set", "Lens Data Cable",
            "Step-up Ring, 110-114mm",
        ], blurbs: [
            "Oval bokeh and horizontal flares with a front anamorphic element.",
            "Classic widescreen look, 2.39:1 on a 4:3 sensor.",
            "Low distortion for an anamorphic design.",
        ]),
        Kind(name: "filter", reference: "Filters", specs: [
            Spec(label: "Size", values: ["4x5.65", "6.6x6.6", "138mm", "4x4"]),
            Spec(label: "Strength", values: [".3", ".6", ".9", "1.2", "1/8", "1/4", "1/2"]),
            Spec(label: "Material", values: ["Optical glass", "Water white glass", "Resin"]),
            Spec(label: "Thickness", values: ["2mm", "4mm", "2.5mm"]),
            Spec(label: "Type", values: ["Neutral density", "Diffusion", "Polarizer", "Graduated"]),
        ], assets: [
            "Filter", "Filter Case", "Filter Pouch", "Cleaning Cloth", "Filter Tray Insert",
            "Filter Wrap", "Lens Tissue", "Rubber Gasket", "Storage Box", "Gel Frame",
            "Test Chart", "Label Tape ", "Edge Guard", "Filter Slot Cover", "Inspection Report",
            "Spare Gasket",
        ], blurbs: [
            "Optically flat filter glass, inspected after every return.",
            "Colour-neutral density with infrared control.",
            "Softens highlights and skin texture without losing sharpness.",
        ]),
        Kind(name: "light", reference: "Lighting", specs: [
            Spec(label: "Power Draw", values: ["450W", "800W", "1,600W", "18,000W", "125W", "2,400W"]),
            Spec(label: "Color Temp", values: ["2800-10000K", "5600K", "3200K", "2700-6500K"]),
            Spec(label: "Beam Angle", values: ["15-60 deg", "110 deg", "30 deg", "12-45 deg"]),
            Spec(label: "Weight", values: ["6.2 kg", "12 kg", "26 kg", "3.1 kg", "48 kg"]),
            Spec(label: "Control", values: ["DMX / RDM", "CRMX, DMX", "Dimmer", "Art-Net, sACN"]),
            Spec(label: "Output", values: ["11,000 lux @ 3m", "3,600 lux @ 3m", "48,000 lux @ 5m"]),
            Spec(label: "Voltage", values: ["100-240V AC", "208-240V", "48V DC", "120V"]),
        ], assets: [
            "Fixture", "Ballast", "Head Cable, 25ft ", "Power Cable, Edison", "Power Cable, True1",
            "Barn Doors", "Diffusion Panel", "Yoke", "Junior Pin", "Baby Pin Adapter",
            "Scrim Set, 4 pieces", "Snoot", "Safety Cable", "DMX Cable, 5-pin 25ft", "Road Case",
            "Egg Crate, 40 deg", "Softbox, Medium", "Spare Lamp",
        ], blurbs: [
            "Full-colour fixture with RGBACL engine and onboard effects.",
            "Punchy daylight source with excellent skin tones.",
            "Flicker-free at every frame rate and shutter angle.",
            "Wireless DMX built in.",
        ]),
        Kind(name: "grip", reference: "Grip", specs: [
            Spec(label: "Max Height", values: ["3.2 m / 10ft 6in", "2.0 m / 6ft 6in", "5.3 m / 17ft 6in", "1.0 m / 3ft 3in"]),
            Spec(label: "Min Height", values: ["1.1 m / 3ft 8in", "0.6 m / 2ft", "1.9 m / 6ft 3in"]),
            Spec(label: "Load Capacity", values: ["10 kg", "25 kg", "50 kg", "120 kg", "450 kg"]),
            Spec(label: "Weight", values: ["7 kg", "14 kg", "22 kg", "3 kg", "190 kg"]),
            Spec(label: "Material", values: ["Steel", "Aluminium", "Chrome steel"]),
            Spec(label: "Footprint", values: ["1.2 m", "0.9 m", "1.6 m"]),
        ], assets: [
            "Stand", "Arm, 40in ", "Grip Head, 2.5in", "Sandbag, 15 lb", "Sandbag, 25 lb",
            "Safety Chain", "Rope, 50ft", "Ratchet Strap, 1in", "Rigging Plate", "Spud, 5/8in",
            "Wedges, set of 6", "Apple Box, Full", "Apple Box, Half ", "Cup Block, set of 4",
            "Track, 8ft straight", "Track, 4ft straight", "Ramp, Dolly", "Case, Rolling",
        ], blurbs: [
            "Grip equipment inspected and load-tested before every rental.",
            "Rock solid on uneven ground.",
            "Packs flat for transport.",
        ]),
        Kind(name: "monitor", reference: "Monitors", specs: [
            Spec(label: "Screen Size", values: ["7in", "13in", "17in", "24in", "31in", "5in"]),
            Spec(label: "Resolution", values: ["1920x1200", "3840x2160", "1920x1080", "4096x2160"]),
            Spec(label: "Brightness", values: ["1000 nits", "2000 nits", "500 nits", "3000 nits"]),
            Spec(label: "Inputs", values: ["2x 12G-SDI, HDMI", "3G-SDI, HDMI", "4x 12G-SDI", "HDMI 2.0"]),
            Spec(label: "Power", values: ["7-34V", "12V 4-pin XLR", "100-240V AC"]),
            Spec(label: "Weight", values: ["0.5 kg", "2.3 kg", "6.9 kg", "11 kg"]),
        ], assets: [
            "Monitor", "Sunhood", "Power Supply, AC", "Power Cable, 4-pin XLR", "Battery Plate, V-Mount ",
            "SDI Cable, 3ft", "SDI Cable, 25ft ", "HDMI Cable, 6ft", "Articulating Arm, 7in",
            "Monitor Yoke", "Road Case", "Tilt Bracket", "LUT Card, SD", "Screen Protector",
            "Monitor Stand", "Cheese Plate",
        ], blurbs: [
            "Calibrated before every rental.",
            "Bright HDR panel for exterior work.",
            "Scopes, LUTs and false colour built in.",
        ]),
        Kind(name: "battery", reference: "Power", specs: [
            Spec(label: "Capacity", values: ["98Wh", "150Wh", "290Wh", "480Wh", "90Wh"]),
            Spec(label: "Voltage", values: ["14.8V", "26V", "24V", "14.4V / 28.8V"]),
            Spec(label: "Max Draw", values: ["10A", "12A", "16A", "20A"]),
            Spec(label: "Mount", values: ["V-Mount", "Gold Mount", "Block"]),
            Spec(label: "Weight", values: ["0.7 kg", "1.1 kg", "3.5 kg", "0.9 kg"]),
            Spec(label: "Charge Time", values: ["2.5 h", "4 h", "6 h"]),
        ], assets: [
            "Battery", "Battery, spare", "Charger", "Charger Power Cable", "D-Tap Cable",
            "Battery Case ", "Battery Belt", "Hot-swap Plate", "USB-C Adapter", "Battery Cover",
            "Charge Log", "Battery Pouch", "P-Tap to 2-pin Cable", "Voltage Meter",
            "Shipping Label, UN3480 ", "Spare Contacts",
        ], blurbs: [
            "Airline-safe lithium-ion pack with LCD fuel gauge.",
            "High-draw cells for LED fixtures and camera packages.",
        ]),
        Kind(name: "power", reference: "Power", specs: [
            Spec(label: "Output", values: ["7,000W", "3,000W", "100A", "60A"]),
            Spec(label: "Circuits", values: ["6x 20A", "4x Edison", "2x 30A", "1x 50A"]),
            Spec(label: "Voltage", values: ["120V", "120/240V", "208V"]),
            Spec(label: "Weight", values: ["118 kg", "35 kg", "6 kg", "20 kg"]),
            Spec(label: "Fuel", values: ["Gasoline", "n/a", "Diesel"]),
        ], assets: [
            "Unit", "Stinger, 25ft ", "Stinger, 50ft", "Cube Tap", "Camlok Tails, set",
            "Ground Rod", "Fire Extinguisher", "Fuel Can", "Rubber Mat", "Cable Ramp",
            "Lunchbox", "Splitter, 2-fer", "Power Cable, Bates 100ft", "Wheel Kit", "Gas Cap, spare",
            "Cable Tie, Velcro x10",
        ], blurbs: [
            "Quiet inverter power for set and base camp.",
            "Electrical distribution with GFCI protection.",
        ]),
        Kind(name: "audio", reference: "Audio", specs: [
            Spec(label: "Channels", values: ["1", "2", "8", "16", "32"]),
            Spec(label: "Frequency Response", values: ["20 Hz - 20 kHz", "40 Hz - 20 kHz", "10 Hz - 40 kHz"]),
            Spec(label: "Inputs", values: ["XLR", "TA5", "Lemo 3-pin", "Dante"]),
            Spec(label: "Power", values: ["AA x2", "12V", "NP-F", "Phantom 48V"]),
            Spec(label: "Weight", values: ["95 g", "1.2 kg", "165 g", "2.0 kg"]),
            Spec(label: "Range", values: ["100 m", "300 ft", "n/a"]),
        ], assets: [
            "Unit", "Lavalier Microphone", "Windscreen", "Furry Windjammer ", "Shock Mount",
            "Antenna, whip", "Belt Clip", "AA Battery, x4", "XLR Cable, 10ft", "XLR Cable, 25ft",
            "TA5 Breakout Cable", "Headphones", "Case, Soft", "Mounting Tape", "Lav Concealer ",
            "Timecode Cable, BNC",
        ], blurbs: [
            "Broadcast-grade sound, prepped by our audio department.",
            "Timecode in and out for multi-camera shoots.",
        ]),
        Kind(name: "support", reference: "Support", specs: [
            Spec(label: "Payload", values: ["25 kg", "30 kg", "12 kg", "45 kg"]),
            Spec(label: "Height Range", values: ["0.5-1.6 m", "0.3-0.9 m", "0.9-1.8 m"]),
            Spec(label: "Weight", values: ["6.2 kg", "3.1 kg", "9.8 kg", "1.4 kg"]),
            Spec(label: "Bowl Size", values: ["150mm", "100mm", "Mitchell", "75mm"]),
            Spec(label: "Counterbalance", values: ["0-16 steps", "Variable", "n/a"]),
            Spec(label: "Pan/Tilt", values: ["Fluid, 7+7 steps", "Geared", "Motorized"]),
        ], assets: [
            "Head", "Legs", "Spreader", "Pan Bar", "Pan Bar, telescopic ", "Tie Down Strap",
            "Camera Plate", "Euro Adapter", "Mitchell to 150mm Adapter", "Hi Hat", "Case, Hard",
            "Case, Soft", "Rubber Feet", "Spiked Feet", "Leveling Bubble", "Handle Clamp",
        ], blurbs: [
            "Smooth, drift-free drag in every step.",
            "Stabilised operating for long takes.",
            "Quick-release plate compatible with our camera builds.",
        ]),
        Kind(name: "focus", reference: "Support", specs: [
            Spec(label: "Motors", values: ["3", "1", "2", "4"]),
            Spec(label: "Range", values: ["1 mile", "300 m", "100 m"]),
            Spec(label: "Compatibility", values: ["ARRI LBUS", "Preston", "cmotion", "All cine lenses"]),
            Spec(label: "Power", values: ["12-34V", "LBUS", "Battery, internal"]),
            Spec(label: "Weight", values: ["450 g", "820 g", "210 g"]),
        ], assets: [
            "Hand Unit", "Motor", "Motor Cable, 0.5m", "Motor Cable, 1m ", "Receiver",
            "Motor Bracket, 15mm", "Motor Bracket, 19mm", "Focus Ring, Marking", "Battery, spare",
            "Charger", "Antenna", "Case, Hard", "Gear, 0.8 mod", "Gear, 0.5 mod", "Hand Strap",
            "Lens Map Card",
        ], blurbs: [
            "Lens mapping and distance readout on the hand unit.",
            "Three-axis wireless control for focus, iris and zoom.",
        ]),
        Kind(name: "generic", reference: "", specs: [
            Spec(label: "Dimensions", values: ["4 x 5.65in", "6.6 x 6.6in", "300 x 200 x 80mm"]),
            Spec(label: "Weight", values: ["0.3 kg", "1.2 kg", "2.4 kg", "8 kg"]),
            Spec(label: "Compatibility", values: ["15mm LWS", "19mm Studio", "Universal", "PL / LPL"]),
            Spec(label: "Material", values: ["Aluminium", "Carbon fibre", "Stainless steel"]),
        ], assets: [
            "Unit", "Case, Hard", "Case, Soft ", "Mounting Hardware", "Allen Key Set", "Spare Screws",
            "Adapter Plate", "Rod Clamp, 15mm", "Rod Clamp, 19mm", "Manual", "Tie Down",
            "Foam Insert", "Lens Tissue", "Cleaning Kit", "Label, Asset ", "Spare Knob",
        ], blurbs: [
            "Accessory kit checked and cleaned after every rental.",
            "Fits every camera build in our fleet.",
        ]),
    ]

    /// Sentences any description may end with; some carry the quirks of the real files
    /// (mis-decoded UTF-8 and a no-break space).
    static let genericSentences = [
        "Call for availability.", "Weekend rates apply.", "Prep time required: 1 day.",
        "Insurance certificate required.", "Available for long-term rental.",
        "See our website for package options.", "Ships in a padded road case.",
    ]
    static let mojibakeSentences = [
        "Includes Cooke /i lens data and ARRIâ€™s LPL adapter.",
        "PrÃ©-testÃ© par notre dÃ©partement camÃ©ra.",
        "Designed for the â€œbig lookâ€ of large format.",
        "Weight: 2,6 kg â€“ rÃ©f. 2017.",
        "Supports Cineâ„¢ workflow.",
    ]
    static let noBreakSentences = [
        "Weight:\u{00A0}2.6\u{00A0}kg.", "Ask\u{00A0}for the\u{00A0}package price.",
    ]

    /// Well-known film-equipment manufacturers beyond the ones the tree uses; the mfg table lists
    /// both (with quirks) and fills up to its size with invented names.
    static let moreManufacturers = [
        "Sigma", "Tokina", "Schneider Kreuznach", "Vantage", "Kowa", "Lomo", "Meike", "DZOFilm",
        "Lee Filters", "Rosco", "Kino Flo", "Nanlite", "Godox", "Dedolight", "Manfrotto", "Kupo",
        "Fisher", "Vocas", "SHAPE", "Heden", "Vaxis", "Deity Microphones", "Rode", "Sony Pro",
        "Miller", "Ronin", "Shotover", "Bolt", "MRMC", "Cinelease", "Litegear", "Digital Sputnik",
        "Outsight", "Kessler", "Syrp", "SmallRig", "Zacuto", "Wooden Camera", "Tiffen Steadicam",
        "Steadicam", "Gates", "Cinegears", "Ikan", "Portkeys", "Zeiss Cine", "IB/E Optics", "Ultimatte",
        "AJA", "Blackmagic", "Convergent Design",
    ]
    static let inventedPrefixes = [
        "Cine", "Lumi", "Opti", "Kino", "Astra", "Nova", "Prism", "Flux", "Vista", "Aero", "Reel",
        "Focal", "Halo", "Beam", "Iris", "Pano", "Strato", "Tru", "Vero", "Zen",
    ]
    static let inventedSuffixes = [
        "tek", "lux", "max", " Gear", "craft", " Works", " Systems", " Optics", " Grip", "vision",
        " Labs", "motion", " Rigs", "light", " Pro",
    ]
}
