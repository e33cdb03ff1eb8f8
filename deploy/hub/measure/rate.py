"""A closed-loop GET load on 16 keep-alive connections for SIZING.md:
Usage: rate.py PORT[,PORT...] PATH ETAG|- SECONDS   (127.0.0.1; with an ETag, each GET sends If-None-Match)
"""
import asyncio, sys, time
host, ports, path, etag, secs = "127.0.0.1", [int(p) for p in sys.argv[1].split(",")], sys.argv[2], sys.argv[3], float(sys.argv[4])
count = 0
async def worker(port):
    global count
    r, w = await asyncio.open_connection(host, port)
    inm = f"If-None-Match: {etag}\r\n" if etag != "-" else ""
    req = f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\n{inm}\r\n".encode()
    end = time.time() + secs
    while time.time() < end:
        w.write(req); await w.drain()
        head = await r.readuntil(b"\r\n\r\n")
        n = 0
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"): n = int(line.split(b":")[1])
        if n: await r.readexactly(n)
        count += 1
    w.close()
async def main():
    await asyncio.gather(*[worker(ports[i % len(ports)]) for i in range(16)])
asyncio.run(main())
print(f"{count/secs:.0f} req/s over {secs} s, 16 connections, ports {ports}, {path} etag={etag}")
