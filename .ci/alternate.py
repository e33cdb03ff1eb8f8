#!/usr/bin/env python3
"""A small HTTP proxy that sends each request to the next of its upstreams
in turn (round robin per request, not per connection), so that a client
reusing one connection still alternates between hub replicas.

Usage: alternate.py LISTEN_PORT UPSTREAM_PORT [UPSTREAM_PORT ...]   (all on 127.0.0.1)
The request line, headers (Host included, so signatures made for the
proxy's address still verify when the replicas are told its name) and body
go through unchanged; so does the answer, byte for byte.
"""
import http.client
import http.server
import itertools
import sys
import threading

HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te", "trailer"}


def main():
    listen = int(sys.argv[1])
    upstreams = itertools.cycle(int(p) for p in sys.argv[2:])
    turn = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def forward(self):
            with turn:
                port = next(upstreams)
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
            try:
                conn.request(self.command, self.path, body=body, headers=headers)
            except (BrokenPipeError, ConnectionResetError):
                pass  # a replica answering before it read the whole body (413): its answer follows
            try:
                answer = conn.getresponse()
                data = answer.read()
            except (OSError, http.client.HTTPException) as e:
                data = ('{"code":"bad_gateway","error":"upstream %d: %s"}' % (port, type(e).__name__)).encode()
                self.send_response_only(502)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            self.send_response_only(answer.status, answer.reason)
            for k, v in answer.getheaders():
                if k.lower() not in HOP and k.lower() != "content-length":
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
            conn.close()

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = do_OPTIONS = forward

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", listen), Handler)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
