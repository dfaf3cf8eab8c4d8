-- wrk script: POST /graphql with one JSON request body.
-- The query and variables come from the environment (CG_QUERY, CG_VARIABLES), set by bench/run.py.
local function json_string(s)
  return '"' .. s:gsub('\\', '\\\\'):gsub('"', '\\"'):gsub('\n', '\\n') .. '"'
end

local query = os.getenv("CG_QUERY") or "query Small($id: ID!) { product(id: $id) { id sku name displayOrder thumbnail } }"
local variables = os.getenv("CG_VARIABLES") or '{"id":"1"}'

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json"
wrk.body = '{"query":' .. json_string(query) .. ',"variables":' .. variables .. '}'

