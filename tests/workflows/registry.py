"""A package registry on the loopback for the developer workflows (tests/suite/workflows.rs):
the test points pip or npm at it and lists only its address in `tools.shell.network`, so that
installing goes through the sandbox's proxy as from the real registry, without the internet.

    python3 registry.py pypi DIR   # PEP 503 simple index of the wheels in DIR
    python3 registry.py npm DIR    # npm registry of the package tarballs (*.tgz) in DIR

Binds 127.0.0.1 on a free port, prints the port on its first line, and logs each request on
stderr. Serves until killed.
"""

import base64
import hashlib
import html
import http.server
import json
import os
import re
import sys
import tarfile


def normalize(name):
    return re.sub(r"[-_.]+", "-", name).lower()


class Registry(http.server.BaseHTTPRequestHandler):
    kind = ""
    root = ""

    def send(self, body, content_type):
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def base(self):
        return "http://127.0.0.1:%d" % self.server.server_address[1]

    def file(self, name):
        path = os.path.join(self.root, os.path.basename(name))
        if not os.path.isfile(path):
            self.send_error(404)
            return
        with open(path, "rb") as f:
            self.send(f.read(), "application/octet-stream")

    def do_GET(self):
        path = self.path.split("?")[0].strip("/")
        if self.kind == "pypi":
            self.pypi(path)
        else:
            self.npm(path)

    def pypi(self, path):
        parts = path.split("/")
        if parts[0] == "files" and len(parts) == 2:
            return self.file(parts[1])
        if parts[0] != "simple" or len(parts) != 2:
            return self.send_error(404)
        wanted = normalize(parts[1])
        links = []
        for name in sorted(os.listdir(self.root)):
            if name.endswith(".whl") and normalize(name.split("-")[0]) == wanted:
                with open(os.path.join(self.root, name), "rb") as f:
                    digest = hashlib.sha256(f.read()).hexdigest()
                url = "%s/files/%s#sha256=%s" % (self.base(), name, digest)
                links.append('<a href="%s">%s</a><br>' % (html.escape(url), html.escape(name)))
        if not links:
            return self.send_error(404)
        page = "<!DOCTYPE html><html><body>%s</body></html>" % "\n".join(links)
        self.send(page.encode(), "text/html")

    def npm(self, path):
        if "/-/" in path:
            return self.file(path.rsplit("/", 1)[-1])
        wanted = path.replace("%2f", "/").replace("%2F", "/")
        versions = {}
        for name in sorted(os.listdir(self.root)):
            if not name.endswith(".tgz"):
                continue
            full = os.path.join(self.root, name)
            with tarfile.open(full) as t:
                meta = json.load(t.extractfile("package/package.json"))
            if meta.get("name") != wanted:
                continue
            with open(full, "rb") as f:
                data = f.read()
            meta["dist"] = {
                "tarball": "%s/%s/-/%s" % (self.base(), wanted, name),
                "shasum": hashlib.sha1(data).hexdigest(),
                "integrity": "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode(),
            }
            versions[meta["version"]] = meta
        if not versions:
            return self.send_error(404)
        latest = max(versions, key=lambda v: [int(x) for x in v.split(".")])
        body = {"name": wanted, "dist-tags": {"latest": latest}, "versions": versions}
        self.send(json.dumps(body).encode(), "application/json")


def main():
    Registry.kind, Registry.root = sys.argv[1], sys.argv[2]
    if Registry.kind not in ("pypi", "npm"):
        sys.exit("registry.py: the kind is pypi or npm")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Registry)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
