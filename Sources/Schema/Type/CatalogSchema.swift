// The project's schema, embedded at build time. The text is the top-level schema.graphql byte for
// byte (CatalogSchemaTests checks it); edit that file and copy it here.

public enum CatalogSchema {
    /// The SDL of the catalog API (the contract's schema.graphql with descriptions).
    public static let sdl: String = #"""
        """
        The catalog of a Radiant equipment-rental shop: categories, products with their images, videos,
        specs and kit contents, manufacturers, and the catalog's version.
        """
        schema {
          query: Query
          subscription: Subscription
        }

        """Read access to the catalog."""
        type Query {
          """The catalog's current version (the version row with the greatest versionid)."""
          catalogVersion: CatalogVersion!

          """The top-level categories (those whose parent is 0), ordered by id."""
          categories: [Category!]!

          """
          The category with this id, or null when there is none. Orphaned categories (whose parent does
          not exist) are found too. An id that is not an integer finds nothing.
          """
          category(
            """The category id, as a String or an Int ("05" finds 5)."""
            id: ID!
          ): Category

          """
          The product with this id (its keyid), or null when there is none. An id that is not an integer
          finds nothing.
          """
          product(
            """The product id, as a String or an Int."""
            id: ID!
          ): Product

          """All products matching every given filter, one page at a time."""
          products(
            """Conditions a product must all meet; none given lists every product."""
            filter: ProductFilter

            """The order of the list; keyid breaks every tie."""
            orderBy: ProductOrder = CATALOG

            """The page size, 0 to 100; any other value is an error."""
            first: Int = 50

            """
            The endCursor of the previous page of this same field with the same arguments; a malformed
            cursor is an error.
            """
            after: String
          ): ProductConnection!

          """
          Products whose trimmed name, description or manufacturer contains every word of `text`
          (case-insensitively, each word within a single one of those fields), ordered like
          `orderBy: NAME`.
          """
          search(
            """
            Words separated by white space; %, _ and \ are matched literally. Text without any word is an
            error.
            """
            text: String!

            """The page size, 0 to 100; any other value is an error."""
            first: Int = 50

            """The endCursor of the previous page of this same search; a malformed cursor is an error."""
            after: String
          ): ProductConnection!

          """
          One entry per initial that has products: "A" to "Z" in order, then "#" for names that do not
          start with a letter.
          """
          alphabet: [LetterCount!]!

          """
          One entry per distinct non-empty trimmed manufacturer name of the products, ordered by name
          (binary comparison).
          """
          manufacturers: [Manufacturer!]!

          """
          Pull sync: every change committed in the versions after `sinceVersion` up to the current one,
          read from one consistent snapshot. Resuming with the last version received never misses or
          repeats a change. Errors with extensions.code CHANGES_EXPIRED when `sinceVersion` is older than
          the retained history (refetch the catalog), VERSION_AHEAD when it is newer than the catalog.
          """
          catalogChanges(
            """The last version the client has applied."""
            sinceVersion: Int!
          ): CatalogChangeSet!
        }

        """Live updates of the catalog."""
        type Subscription {
          """
          The current catalog version at once, then again each time a committed change (by any writer,
          another process included) changes it. The same value is never sent twice in a row.
          """
          catalogVersion: CatalogVersion!

          """
          Push sync: with `sinceVersion`, the set for (sinceVersion, current] at once (empty, carrying the
          current version, when the client is up to date), then one set for (previous, new] as each new
          version appears; without it, sets from the next version on. Versions strictly increase.
          """
          catalogChanges(
            """The last version the client has applied, if any."""
            sinceVersion: Int
          ): CatalogChangeSet!
        }

        """Conditions on products; a product must meet every condition given. Null means not given."""
        input ProductFilter {
          """Only products filed under this category."""
          categoryId: ID

          """
          With categoryId: also products filed under any descendant of the category, each counted once
          even where the hierarchy has cycles.
          """
          includeDescendants: Boolean = false

          """Only products whose trimmed manufacturer name is exactly this (case-sensitive)."""
          manufacturer: String

          """Only the product whose stored product_ID is exactly this text (not trimmed)."""
          sku: String

          """
          Only products with this initial: "A" to "Z", or "#" for names that do not start with a letter
          (see Query.alphabet). Any other value, lowercase letters included, is an error.
          """
          letter: String
        }

        """How product lists are ordered; keyid is always the final tie-break."""
        enum ProductOrder {
          """
          As the original catalog app lists a category: by manufacturer, display order, then product
          name (stored values, binary comparison).
          """
          CATALOG

          """By product name, ignoring ASCII case."""
          NAME

          """Most recently added first (keyid descending)."""
          NEWEST
        }

        """The version row of the catalog."""
        type CatalogVersion {
          """The version number (versionid); 0 when the catalog has no version row."""
          version: Int!

          """The stored updatecatalogrow, or null unless it is an integer that fits a 32-bit Int."""
          catalogRow: Int

          """The stored updateassetrow, or null unless it is an integer that fits a 32-bit Int."""
          assetRow: Int
        }

        """A node of the category hierarchy."""
        type Category {
          """The category's id."""
          id: ID!

          """The menu title."""
          title: String!

          """The menu icon, or null when there is none."""
          icon: String

          """The stored level, or null when it is not set."""
          level: Int

          """
          The parent category, or null for a top-level category or when the parent does not exist. A
          category that is its own parent has itself as parent.
          """
          parent: Category

          """The categories whose parent is this one, ordered by id."""
          children: [Category!]!

          """
          The ancestors from the root down to and including this category. The path stops at a missing
          parent and before a category would repeat on a cycle.
          """
          path: [Category!]!

          """The number of products filed under this category."""
          productCount(
            """Also count the products filed under any descendant category."""
            includeDescendants: Boolean = false
          ): Int!

          """The products filed under this category, as Query.products with this category as filter."""
          products(
            """Also list the products filed under any descendant category."""
            includeDescendants: Boolean = false

            """The order of the list; keyid breaks every tie."""
            orderBy: ProductOrder = CATALOG

            """The page size, 0 to 100; any other value is an error."""
            first: Int = 50

            """
            The endCursor of the previous page of this same field with the same arguments; a malformed
            cursor is an error.
            """
            after: String
          ): ProductConnection!
        }

        """A rental product of the catalog."""
        type Product {
          """The product's id (keyid)."""
          id: ID!

          """The stock-keeping unit (product_ID), trimmed."""
          sku: String!

          """The product name."""
          name: String!

          """The manufacturer, or null when the product names none."""
          manufacturer: Manufacturer

          """The category the product is filed under, or null when that category does not exist."""
          category: Category

          """The stored display order, or null when it is not set."""
          displayOrder: Int

          """The thumbnail image, or null when there is none."""
          thumbnail: String

          """The product images, in the catalog's column order; empty ones are left out."""
          images: [String!]!

          """The product videos that are set: bracket, dynamic range, color rendition, promo, green screen."""
          videos: [Video!]!

          """The 360° panorama, or null when there is none."""
          panoramaUrl: String

          """The product description, or null when there is none."""
          description: String

          """
          The product's specifications, labelled by its spec template, in letter order; a spec is listed
          only when both its label and its value are non-empty.
          """
          specs: [Spec!]!

          """The items included in the product's kit, ordered by asset id."""
          kit: [KitItem!]!
        }

        """The kind of a product video."""
        enum VideoKind {
          """A bracket video."""
          BRACKET

          """A dynamic range test."""
          DYNAMIC_RANGE

          """A color rendition test."""
          COLOR_RENDITION

          """A promotional video."""
          PROMO

          """A green screen test."""
          GREEN_SCREEN
        }

        """A product video."""
        type Video {
          """What the video shows."""
          kind: VideoKind!

          """The video's address."""
          url: String!
        }

        """One specification of a product."""
        type Spec {
          """The spec's letter in its template, a single lowercase letter ("a", "b", ...)."""
          key: String!

          """The spec's label, from the product's spec template."""
          label: String!

          """The product's value for this spec."""
          value: String!
        }

        """An item included in a product's kit."""
        type KitItem {
          """The item's id (assetID)."""
          id: ID!

          """The item's name."""
          name: String!

          """How many of the item the kit holds; 0 when the stored quantity is empty or not a number."""
          quantity: Int!
        }

        """A manufacturer, as named by the products."""
        type Manufacturer {
          """The manufacturer's name, trimmed."""
          name: String!

          """The manufacturer's logo, or null when there is none."""
          logo: String

          """The number of products by this manufacturer."""
          productCount: Int!

          """The products by this manufacturer."""
          products(
            """The order of the list; keyid breaks every tie."""
            orderBy: ProductOrder = CATALOG

            """The page size, 0 to 100; any other value is an error."""
            first: Int = 50

            """
            The endCursor of the previous page of this same field with the same arguments; a malformed
            cursor is an error.
            """
            after: String
          ): ProductConnection!
        }

        """The number of products with one initial."""
        type LetterCount {
          """The initial: "A" to "Z", or "#"."""
          letter: String!

          """The number of products with this initial (never 0)."""
          count: Int!
        }

        """One page of a product list."""
        type ProductConnection {
          """The number of matching products, regardless of first and after."""
          totalCount: Int!

          """The products of this page."""
          nodes: [Product!]!

          """The products of this page with their cursors, in the same order as nodes."""
          edges: [ProductEdge!]!

          """Where this page lies in the list."""
          pageInfo: PageInfo!
        }

        """A product of a page with its cursor."""
        type ProductEdge {
          """An opaque cursor; pass it as `after` to continue the list after this product."""
          cursor: String!

          """The product."""
          node: Product!
        }

        """Where a page lies in its list."""
        type PageInfo {
          """True when more products follow this page."""
          hasNextPage: Boolean!

          """True when `after` was given."""
          hasPreviousPage: Boolean!

          """The cursor of the page's first product, or null when the page is empty."""
          startCursor: String

          """The cursor of the page's last product, or null when the page is empty."""
          endCursor: String
        }

        """
        What changed in a range of catalog versions: products and categories in their current state (the
        client picks the fields) and the ids of those removed. No id is both listed and removed.
        """
        type CatalogChangeSet {
          """The version at the end of the range: the version the client holds after applying this set."""
          version: Int!

          """Every product changed in the range that exists now, in its current state, ordered by id."""
          products: [Product!]!

          """Ids of products that existed at the start of the range and do not exist now, ordered."""
          removedProductIds: [ID!]!

          """Every category changed in the range that exists now, in its current state, ordered by id."""
          categories: [Category!]!

          """Ids of categories that existed at the start of the range and do not exist now, ordered."""
          removedCategoryIds: [ID!]!
        }

        """#

    /// The schema built from `sdl`, once. The text is a build-time constant that a test builds,
    /// so failing to build it is a programming error.
    public static let shared: GraphQLSchema = {
        do throws(GraphQLError) {
            return try GraphQLSchema.build(sdl: sdl)
        } catch {
            preconditionFailure("The embedded catalog schema does not build: \(error)")
        }
    }()
}
