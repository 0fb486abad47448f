"""A repair of a large input must not stall the worker thread's other connections: while one
slow repair runs (a 1.2 MB input of a choice-heavy shape, about 2 s), the worst /healthz or small
stream latency beside it. TOOLMEND_WORKERS=1 makes the sharing certain.
Run: python3 benches/hostile/worker_block.py [WORKERS]   (TOOLMEND_BIN=path for another build)"""
import os, sys, threading
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import *
n = int(1.18e6 / len(', ti\u200bme0: v'.encode()))
slow = '{"command": w' + ', ti\u200bme0: v' * n + '}'
def respond(req):
    body = json.loads(req["body"])
    if body["messages"][0]["content"] == "slow":
        pieces = [slow[i:i + 60000] for i in range(0, len(slow), 60000)]
        frames = [msg_start(), tool_start(0, "Bash")] + [input_delta(0, p) for p in pieces] + [stop(0), msg_delta(), msg_stop()]
    else:
        frames = [msg_start(), text_start(0), text_delta(0, "hi"), stop(0), msg_delta("end_turn"), msg_stop()]
    return (200, [("Content-Type", "text/event-stream")], frames, 0)
workers = sys.argv[1] if len(sys.argv) > 1 else "1"
up = Upstream(respond, life=120)
sc = Sidecar(up.port, life=120, env={"TOOLMEND_WORKERS": workers})
try:
    t0 = time.time()
    base = []
    for _ in range(3):
        t = time.time(); post(sc.port, "/v1/messages", body_with(json.dumps([BASH])).replace('"hi"', '"fast"')); base.append(time.time() - t)
    print(f"workers={workers}: a small text stream alone: {max(base)*1000:.0f} ms")
    threads = [threading.Thread(target=lambda: post(sc.port, "/v1/messages", body_with(json.dumps([BASH])).replace('"hi"', '"slow"'))) for _ in range(int(workers))]
    [t.start() for t in threads]
    worst = 0; t_end = time.time() + 8
    while time.time() < t_end and any(t.is_alive() for t in threads):
        t = time.time()
        r = get(sc.port, "/healthz")
        worst = max(worst, time.time() - t)
        t = time.time()
        post(sc.port, "/v1/messages", body_with(json.dumps([BASH])).replace('"hi"', '"fast"'))
        worst = max(worst, time.time() - t)
        time.sleep(0.05)
    [t.join() for t in threads]
    print(f"  while {workers} slow repair stream(s) ran: worst /healthz or small-stream latency {worst*1000:.0f} ms")
finally:
    sc.close()
