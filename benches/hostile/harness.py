"""The harness of the hostile benches (from attack review round 7): a loopback fake Messages
API, the sidecar in front of it, and a raw-socket client. Every server binds 127.0.0.1 port 0
and stops by itself."""
import json, os, socket, subprocess, sys, threading, time, tempfile, signal

# The sidecar under test: TOOLMEND_BIN, else the release build of this checkout.
BIN = os.environ.get("TOOLMEND_BIN", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "target", "release", "toolmend"))
HERE = os.path.dirname(os.path.abspath(__file__))


class Upstream:
    """Fake Messages API. `respond(req)` returns (status, headers, chunks, delay) where chunks is a
    list of bytes written one by one (delay seconds between). Records every request."""

    def __init__(self, respond, life=60):
        self.respond = respond
        self.requests = []
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4096)
        self.sock.settimeout(0.5)
        self.port = self.sock.getsockname()[1]
        self.deadline = time.time() + life
        self.stop = False
        threading.Thread(target=self._loop, daemon=True).start()

    def _loop(self):
        while not self.stop and time.time() < self.deadline:
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()
        self.sock.close()

    def _read_request(self, conn):
        conn.settimeout(20)
        buf = b""
        while b"\r\n\r\n" not in buf:
            d = conn.recv(65536)
            if not d:
                return None
            buf += d
        head, rest = buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = []
        for l in lines[1:]:
            k, v = l.split(":", 1)
            headers.append((k.strip().lower(), v.strip()))
        h = dict(headers)
        body = rest
        if "content-length" in h:
            n = int(h["content-length"])
            while len(body) < n:
                d = conn.recv(65536)
                if not d:
                    break
                body += d
        elif h.get("transfer-encoding", "").lower() == "chunked":
            out = b""
            while True:
                while b"\r\n" not in body:
                    body += conn.recv(65536)
                size, body = body.split(b"\r\n", 1)
                n = int(size.split(b";")[0], 16)
                while len(body) < n + 2:
                    body += conn.recv(65536)
                out += body[:n]
                body = body[n + 2:]
                if n == 0:
                    break
            body = out
        return {"method": method, "path": path, "headers": headers, "body": body}

    def _serve(self, conn):
        try:
            req = self._read_request(conn)
            if req is None:
                return
            self.requests.append(req)
            status, headers, chunks, delay = self.respond(req)
            head = f"HTTP/1.1 {status} X\r\n"
            for k, v in headers:
                head += f"{k}: {v}\r\n"
            head += "Connection: close\r\n"
            if not any(k.lower() in ("content-length", "transfer-encoding") for k, _ in headers):
                head += "Transfer-Encoding: chunked\r\n"
                chunked = True
            else:
                chunked = False
            conn.sendall(head.encode() + b"\r\n")
            for c in chunks:
                if c is None:  # close mid-stream
                    conn.close()
                    return
                if isinstance(c, (int, float)):
                    time.sleep(c)
                    continue
                conn.sendall(b"%x\r\n%s\r\n" % (len(c), c) if chunked else c)
                if delay:
                    time.sleep(delay)
            if chunked:
                conn.sendall(b"0\r\n\r\n")
        except Exception as e:  # noqa
            sys.stderr.write(f"upstream: {e!r}\n")
        finally:
            try:
                conn.close()
            except Exception:
                pass


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Sidecar:
    def __init__(self, upstream_port, config="", args=(), life=60, env=None):
        self.port = free_port()
        self.cfgfile = None
        pre = ["prlimit", "--nofile=%s" % os.environ["SIDECAR_NOFILE"]] if os.environ.get("SIDECAR_NOFILE") else []
        cmd = pre + ["timeout", str(life), BIN, "serve", "--listen", f"127.0.0.1:{self.port}",
               "--upstream", f"http://127.0.0.1:{upstream_port}", *args]
        if config:
            fd, self.cfgfile = tempfile.mkstemp(suffix=".toml", dir="/tmp")
            os.write(fd, config.encode())
            os.close(fd)
            cmd += ["--config", self.cfgfile]
        e = dict(os.environ)
        e.setdefault("TOOLMEND_LOG", "info")
        if env:
            e.update(env)
        self.log = tempfile.NamedTemporaryFile(prefix="tm7log", dir="/tmp", delete=False)
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=self.log, env=e)
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("sidecar did not start: " + open(self.log.name).read())

    def logs(self):
        return open(self.log.name, errors="replace").read()

    def close(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def raw(port, data, pieces=None, gap=0.0, timeout=20, read=True):
    """Sends `data` (bytes) on a fresh connection, optionally in pieces of `pieces` bytes, reads
    the whole response (the sidecar keeps the connection: read until the body ends)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    if pieces:
        for i in range(0, len(data), pieces):
            s.sendall(data[i:i + pieces])
            if gap:
                time.sleep(gap)
    else:
        s.sendall(data)
    if not read:
        return s
    buf = b""
    s.settimeout(timeout)
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            buf += d
            if response_complete(buf):
                break
    except socket.timeout:
        buf += b"<<TIMEOUT>>"
    s.close()
    return buf


def response_complete(buf):
    if b"\r\n\r\n" not in buf:
        return False
    head, body = buf.split(b"\r\n\r\n", 1)
    h = head.lower()
    if b"transfer-encoding: chunked" in h:
        return body.endswith(b"0\r\n\r\n")
    for line in h.split(b"\r\n"):
        if line.startswith(b"content-length:"):
            return len(body) >= int(line.split(b":")[1])
    return False


def split_response(buf):
    head, body = buf.split(b"\r\n\r\n", 1)
    if b"transfer-encoding: chunked" in head.lower():
        out = b""
        while body:
            size, body = body.split(b"\r\n", 1)
            n = int(size, 16)
            if n == 0:
                break
            out += body[:n]
            body = body[n + 2:]
        body = out
    return head.decode("latin-1"), body


def post(port, path, body, headers=(), pieces=None, chunked=False):
    if isinstance(body, str):
        body = body.encode()
    h = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nx-api-key: sk-ant-secret-KEY123\r\n" \
        f"anthropic-version: 2023-06-01\r\nContent-Type: application/json\r\n"
    for k, v in headers:
        h += f"{k}: {v}\r\n"
    if chunked:
        h += "Transfer-Encoding: chunked\r\n\r\n"
        data = h.encode()
        step = pieces or len(body) or 1
        for i in range(0, len(body), step):
            c = body[i:i + step]
            data += b"%x\r\n%s\r\n" % (len(c), c)
        data += b"0\r\n\r\n"
        return raw(port, data, pieces=None)
    h += f"Content-Length: {len(body)}\r\n\r\n"
    return raw(port, h.encode() + body, pieces=pieces)


def get(port, path, host=None, headers=()):
    h = f"GET {path} HTTP/1.1\r\nHost: {host or f'127.0.0.1:{port}'}\r\n"
    for k, v in headers:
        h += f"{k}: {v}\r\n"
    return raw(port, (h + "\r\n").encode())


# ---- SSE building

def frame(event, data, nl="\n"):
    d = data if isinstance(data, str) else json.dumps(data)
    out = (f"event: {event}{nl}" if event is not None else "") + f"data: {d}{nl}{nl}"
    return out.encode()


def msg_start():
    return frame("message_start", {"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x", "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}})


def tool_start(index, name, id="toolu_1"):
    return frame("content_block_start", {"type": "content_block_start", "index": index, "content_block": {
        "type": "tool_use", "id": id, "name": name, "input": {}}})


def text_start(index):
    return frame("content_block_start", {"type": "content_block_start", "index": index,
                                         "content_block": {"type": "text", "text": ""}})


def text_delta(index, text):
    return frame("content_block_delta", {"type": "content_block_delta", "index": index,
                                         "delta": {"type": "text_delta", "text": text}})


def input_delta(index, pj, event="content_block_delta", type_="content_block_delta"):
    return frame(event, {"type": type_, "index": index, "delta": {"type": "input_json_delta", "partial_json": pj}})


def stop(index):
    return frame("content_block_stop", {"type": "content_block_stop", "index": index})


def msg_delta(reason="tool_use"):
    return frame("message_delta", {"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": None},
                                   "usage": {"output_tokens": 5}})


def msg_stop():
    return frame("message_stop", {"type": "message_stop"})


def sse_response(frames, delay=0.0):
    return lambda req: (200, [("Content-Type", "text/event-stream"), ("request-id", "req_up")], frames, delay)


BASH = {"name": "Bash", "description": "run", "input_schema": {
    "type": "object", "properties": {"command": {"type": "string"}, "timeout": {"type": "number"},
                                     "run_in_background": {"type": "boolean"}},
    "required": ["command"], "additionalProperties": False}}

SEARCH_ARR = {"name": "search", "input_schema": {"type": "object", "properties": {
    "terms": {"type": "array", "items": {"type": "string"}}, "limit": {"type": "integer"}},
    "required": ["terms"], "additionalProperties": False}}
SEARCH_STR = {"name": "search", "input_schema": {"type": "object", "properties": {
    "terms": {"type": "string"}, "limit": {"type": "integer"}},
    "required": ["terms"], "additionalProperties": False}}


def body_with(tools_json_text, extra=""):
    return ('{"model":"claude-x","max_tokens":100,"stream":true,' + extra +
            '"messages":[{"role":"user","content":"hi"}],"tools":' + tools_json_text + '}')


def input_of(sse_bytes, index=None):
    """What the CLI builds: every input_json_delta of a tool_use block appended, by the frames'
    data `type` (as the SDKs dispatch), up to the block's first content_block_stop."""
    out = {}
    stopped = set()
    for fr in parse_sse(sse_bytes):
        ev, data = fr
        if ev in (None, "ping", "error"):
            continue
        try:
            d = json.loads(data)
        except Exception:
            continue
        t = d.get("type")
        if t == "content_block_start" and d["content_block"].get("type") == "tool_use":
            out[d["index"]] = ""
        elif t == "content_block_delta" and d["delta"].get("type") == "input_json_delta":
            if d["index"] in out and d["index"] not in stopped:
                out[d["index"]] += d["delta"]["partial_json"]
        elif t == "content_block_stop":
            stopped.add(d.get("index"))
    return out if index is None else out.get(index)


def parse_sse(b):
    text = b.decode("utf-8", errors="replace")
    frames = []
    ev, data = None, []
    import re
    for line in re.split(r"\r\n|\r|\n", text):
        if line == "":
            if ev is not None or data:
                frames.append((ev, "\n".join(data)))
            ev, data = None, []
            continue
        if line.startswith(":"):
            continue
        f, _, v = line.partition(":")
        if v.startswith(" "):
            v = v[1:]
        if f == "event":
            ev = v
        elif f == "data":
            data.append(v)
    return frames


def offline(raw_input, schema, stop="tool_use", tool=None):
    rec = {"raw": raw_input, "schema": schema, "stop_reason": stop}
    if tool:
        rec["tool"] = tool
    p = subprocess.run(["timeout", "30", BIN, "repair", "/dev/stdin"], input=json.dumps(rec).encode(),
                       capture_output=True)
    line = p.stdout.decode().strip().splitlines()
    return json.loads(line[0]) if line else p.stderr.decode()


def events(port):
    _, body = split_response(get(port, "/events"))
    return json.loads(body)["events"]


def through(frames, tools=None, config="", life=60, delay=0.0, split=None, want_events=False, args=()):
    """Streams `frames` (list of bytes; ints/floats = sleeps; None = close) from a fake upstream
    through a fresh sidecar; `split` re-cuts the byte stream into pieces of that size.
    Returns (upstream bytes, client body bytes[, events])."""
    tools = tools or [BASH]
    if split:
        joined = b"".join(f for f in frames if isinstance(f, bytes))
        frames = [joined[i:i + split] for i in range(0, len(joined), split)]
    up = Upstream(sse_response(frames, delay), life=life)
    sc = Sidecar(up.port, config=config, life=life, args=args)
    try:
        resp = post(sc.port, "/v1/messages?beta=true", body_with(json.dumps(tools)))
        head, out = split_response(resp) if b"\r\n\r\n" in resp else ("", resp)
        sent = b"".join(f for f in frames if isinstance(f, bytes))
        if want_events:
            return sent, out, events(sc.port), sc.logs()
        return sent, out
    finally:
        sc.close()


def show(name, sent, out, note=""):
    print(f"== {name} {note}")
    print("  byte-identical:", sent == out)
    print("  CLI input (upstream stream):", input_of(sent))
    print("  CLI input (through toolmend):", input_of(out))
