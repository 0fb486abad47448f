"""Memory and connections under a hostile client or upstream: slow bodies past the header timeout,
concurrent big chunked bodies (peak RSS, and whether it comes back), an upstream frame that never
ends, many tool blocks held at once, text queued behind a block that waits for its stop reason.
Run: python3 benches/hostile/resource.py   (TOOLMEND_BIN=path for another build)"""
import sys, os, threading
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import *

def rss(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) // 1024
    return -1

def tm_pid(sc):
    # the real toolmend child of `timeout`
    kids = open(f"/proc/{sc.proc.pid}/task/{sc.proc.pid}/children").read().split()
    return int(kids[0])

def fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))

mode = sys.argv[1] if len(sys.argv) > 1 else "all"

if mode in ("slow", "all"):
    print("== slow bodies: 300 connections send a head with Content-Length: 100000, then 1 byte / 5 s")
    up = Upstream(lambda req: (200, [("Content-Type", "application/json"), ("Content-Length", "2")], [b"{}"], 0), life=120)
    sc = Sidecar(up.port, life=120, config="header_read_timeout_seconds = 2\n")
    pid = tm_pid(sc)
    socks = []
    for i in range(300):
        s = socket.create_connection(("127.0.0.1", sc.port))
        s.sendall(f"POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{{".encode())
        socks.append(s)
    t0 = time.time()
    while time.time() - t0 < 20:
        for s in socks:
            try:
                s.send(b" ")
            except OSError:
                pass
        time.sleep(5)
    alive = 0
    for s in socks:
        s.setblocking(False)
        try:
            d = s.recv(1)
            alive += 0 if d == b"" else 1
        except BlockingIOError:
            alive += 1
        except OSError:
            pass
    print(f"  after 20 s (header_read_timeout 2 s): {alive}/300 client connections still open; toolmend fds {fds(pid)}; upstream connections accepted {len(threading.enumerate())} threads in fake")
    t = time.time(); r = get(sc.port, "/healthz"); print("  /healthz meanwhile:", r.split(b"\r\n")[0], f"{time.time()-t:.2f}s")
    for s in socks: s.close()
    sc.close()

def big_bodies(label, config):
    print(f"== {label}: 24 concurrent chunked bodies of 30 MiB each (max_request_bytes 32 MiB)")
    up = Upstream(lambda req: (200, [("Content-Type", "application/json"), ("Content-Length", "2")], [b"{}"], 0), life=200)
    sc = Sidecar(up.port, life=200, config=config)
    pid = tm_pid(sc)
    print("  RSS at start:", rss(pid), "MiB")
    body = b'{"model":"x","messages":[{"role":"user","content":"' + b"a" * (30 << 20) + b'"}]}'
    peak = [0]
    statuses = []
    def one():
        s = socket.create_connection(("127.0.0.1", sc.port), timeout=120)
        try:
            s.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
            step = 1 << 20
            for i in range(0, len(body), step):
                c = body[i:i + step]
                s.sendall(b"%x\r\n%s\r\n" % (len(c), c))
                time.sleep(0.05)
            s.sendall(b"0\r\n\r\n")
        except OSError:
            pass  # refused early: the answer says why
        try:
            statuses.append(s.recv(100).split(b" ")[1].decode())
        except (OSError, IndexError):
            statuses.append("closed")
        s.close()
    ts = [threading.Thread(target=one) for _ in range(24)]
    [t.start() for t in ts]
    while any(t.is_alive() for t in ts):
        peak[0] = max(peak[0], rss(pid)); time.sleep(0.2)
    print("  peak RSS during:", peak[0], "MiB; answers:", {c: statuses.count(c) for c in sorted(set(statuses))})
    time.sleep(3)
    print("  RSS 3 s after all finished:", rss(pid), "MiB")
    sc.close()

if mode in ("big", "all"):
    big_bodies("big", "")
if mode in ("big-strict", "all"):
    # Strict injection on: each body is read whole for its rewrite.
    big_bodies("big-strict", '[strict]\ntools = ["Bash"]\n')

if mode in ("endless", "all"):
    print("== upstream: one SSE frame that never ends (200 MB of data: without a blank line)")
    chunk = b"x" * (1 << 20)
    frames = [msg_start(), tool_start(0, "Bash"), b"event: content_block_delta\ndata: "] + [chunk] * 200
    up = Upstream(sse_response(frames), life=120)
    sc = Sidecar(up.port, life=120)
    pid = tm_pid(sc)
    s = raw(sc.port, ("POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body_with(json.dumps([BASH])))).encode() + body_with(json.dumps([BASH])).encode(), read=False)
    s.settimeout(60); got = 0; peak = 0; t0 = time.time()
    try:
        while time.time() - t0 < 60:
            d = s.recv(1 << 20)
            if not d: break
            got += len(d); peak = max(peak, rss(pid))
    except socket.timeout:
        pass
    peak = max(peak, rss(pid))
    print(f"  client received {got} bytes; toolmend peak RSS {peak} MiB (max_held_bytes default 4 MiB)")
    s.close(); sc.close()

if mode in ("blocks", "all"):
    print("== upstream: 60 tool_use blocks open at once, each 3.9 MiB of input (under max_held_bytes)")
    piece = '{"command": "' + "a" * (1 << 16)
    frames = [msg_start()]
    for i in range(60):
        frames.append(tool_start(i, "Bash", f"toolu_{i}"))
    for k in range(60):  # 60 deltas per block of 64 KiB
        for i in range(60):
            frames.append(input_delta(i, "a" * (1 << 16)))
    frames.append(30)  # stall 30 s with everything held
    up = Upstream(sse_response(frames), life=120)
    sc = Sidecar(up.port, life=120)
    pid = tm_pid(sc)
    body = body_with(json.dumps([BASH])).encode()
    s = raw(sc.port, b"POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body, read=False)
    s.settimeout(2); got = 0; peak = 0; t0 = time.time()
    while time.time() - t0 < 25:
        try:
            d = s.recv(1 << 20)
            if not d: break
            got += len(d)
        except socket.timeout:
            pass
        peak = max(peak, rss(pid))
    print(f"  client received {got} bytes in 25 s; toolmend peak RSS {peak} MiB")
    s.close(); sc.close()

if mode in ("waiting", "all"):
    print("== upstream: an invalid tool block stops, then 200 MiB of text deltas before any message_delta")
    frames = [msg_start(), tool_start(0, "Bash"), input_delta(0, '{"command": ls}'), stop(0), text_start(1)]
    td = text_delta(1, "x" * (1 << 20))
    frames += [td] * 200 + [20]
    up = Upstream(sse_response(frames), life=120)
    sc = Sidecar(up.port, life=120)
    pid = tm_pid(sc)
    body = body_with(json.dumps([BASH])).encode()
    s = raw(sc.port, b"POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body, read=False)
    s.settimeout(2); got = 0; peak = 0; t0 = time.time()
    while time.time() - t0 < 18:
        try:
            d = s.recv(1 << 20)
            if not d: break
            got += len(d)
        except socket.timeout:
            pass
        peak = max(peak, rss(pid))
    print(f"  client received {got} bytes in 18 s; toolmend peak RSS {peak} MiB")
    s.close(); sc.close()
