-- Serves Streamlit's static files from copies gzipped once at level 9 by
-- scripts/precompress_static.py (scripts/serve.sh runs it as it starts), instead of HAProxy's
-- on-the-fly libslz, which has no levels and sends the JavaScript 40-130 % larger.
--
-- The manifest named by the environment variable TJ_STATIC_GZ_MANIFEST (set in the
-- configuration's global section) lists "<URL path> TAB <gzip file> TAB <content type>". Every
-- listed file is read into memory at start-up (~7 MB): a request is a table lookup, no file is
-- opened while serving and no request path ever reaches the file system.
--
--   global
--       setenv TJ_STATIC_GZ_MANIFEST /path/to/manifest.tsv
--       lua-load /path/to/deploy/static_gz.lua
--   frontend ...
--       http-request use-service lua.static_gz if { path_beg /static/ } { req.hdr(accept-encoding) -m sub gzip } { lua.static_gz_has -m bool }

local files = {}

core.register_init(function()
  local manifest = os.getenv("TJ_STATIC_GZ_MANIFEST")
  if manifest == nil or manifest == "" then
    return
  end
  local count = 0
  for line in io.lines(manifest) do
    local url_path, gzip_file, content_type = line:match("^([^\t]+)\t([^\t]+)\t([^\t]+)$")
    if url_path ~= nil then
      local handle = io.open(gzip_file, "rb")
      if handle ~= nil then
        files[url_path] = { body = handle:read("*a"), content_type = content_type }
        handle:close()
        count = count + 1
      end
    end
  end
  core.Info("static_gz: " .. count .. " precompressed static files")
end)

-- Whether the request's path (without its query string) has a precompressed copy.
core.register_fetches("static_gz_has", function(txn)
  return files[txn.sf:path()] ~= nil
end)

-- The same headers Streamlit sends for these hashed, never-changing files, plus the encoding.
core.register_service("static_gz", "http", function(applet)
  local file = files[applet.path]
  if file == nil then -- only reached through the fetch above: cannot happen
    applet:set_status(404)
    applet:add_header("content-length", "0")
    applet:start_response()
    return
  end
  applet:set_status(200)
  applet:add_header("content-type", file.content_type)
  applet:add_header("content-encoding", "gzip")
  applet:add_header("vary", "Accept-Encoding")
  applet:add_header("cache-control", "public, immutable, max-age=31536000")
  applet:add_header("content-length", tostring(#file.body))
  applet:start_response()
  if applet.method ~= "HEAD" then
    applet:send(file.body)
  end
end)
