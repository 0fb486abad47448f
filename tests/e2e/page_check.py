"""The live page in a real browser (Debian's chromium and chromium-driver, driven by Selenium).

Usage: page_check.py SIDECAR_URL REDACTED_SIDECAR_URL [--screenshot PNG]

Both sidecars sit in front of a fake Messages API that streams, as the input of a call to the
first offered tool, the text of the request's user message (tests/page.rs). This script sends
calls through them, opens `/` and checks what the page shows. It prints a JSON summary for the
Rust test; a failed check raises with a message.
"""

import json
import shutil
import sys
import tempfile
import time
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By

TOOL = "mcp__search__search"
SCHEMA = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "terms": {"type": "array", "items": {"type": "string"}},
        "limit": {"type": "integer"},
    },
    "required": ["query"],
    "additionalProperties": False,
}
# Two-, three- and four-byte characters (one a UTF-16 surrogate pair) before the edit: byte
# offsets and JavaScript string offsets differ.
REPAIRED = '{"query": "smörgåsbord — Ωμέγα 𝑥 ✓", "terms": token machine, payout percentage}'
DIALECT = "{'query': 'crème brûlée', \"limit\": 5}"
HOSTILE = (
    '{"query": "<script>window.__pwned = 1</script><img src=x onerror=\'window.__pwned = 2\'>", '
    '"limit": five}'
)
# Valid JSON that breaks the schema, as the PostToolBatch hook reports it (POST /events): the
# stream passes valid JSON without a verdict, so this outcome reaches the page from outside.
INVALID = '{"query": 42}'
VALID = '{"query": "fine as it is", "limit": 3}'
LATE = '{"query": "arrived later", "terms": one, two}'


def call(base, raw):
    body = {
        "model": "claude-fake",
        "max_tokens": 100,
        "stream": True,
        "tools": [{"name": TOOL, "description": "Search", "input_schema": SCHEMA}],
        "messages": [{"role": "user", "content": raw}],
    }
    request = urllib.request.Request(
        f"{base}/v1/messages",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json", "x-api-key": "test-key"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        stream = response.read().decode()
    assert "content_block_stop" in stream, stream


def report(base, event):
    request = urllib.request.Request(
        f"{base}/events", data=json.dumps(event).encode(), headers={"content-type": "application/json"}, method="POST"
    )
    urllib.request.urlopen(request, timeout=10).close()


def events(base, since=0):
    with urllib.request.urlopen(f"{base}/events?since={since}", timeout=10) as response:
        return json.load(response)["events"]


def wait_for(what, timeout=20.0):
    deadline = time.monotonic() + timeout
    while True:
        try:
            result = what()
            if result:
                return result
        except Exception:  # the page may still be building the node
            if time.monotonic() > deadline:
                raise
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what.__doc__ or what}")
        time.sleep(0.1)


def browser(profile):
    options = Options()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for flag in [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--window-size=1400,1000",
        f"--user-data-dir={profile}",
    ]:
        options.add_argument(flag)
    driver = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    # On a loaded machine chromium sometimes fails to start in time; that is not the page's fault.
    for attempt in range(3):
        try:
            return webdriver.Chrome(options=options, service=Service(executable_path=driver))
        except WebDriverException as error:
            print(f"chromium did not start (attempt {attempt + 1}): {error.msg}", file=sys.stderr)
            time.sleep(1)
    raise AssertionError("chromium did not start")


def card(driver, event_id):
    return driver.find_element(By.CSS_SELECTOR, f'#calls article[data-event-id="{event_id}"]')


def text_of(element):
    return element.get_attribute("textContent")


def check_page(driver, base):
    for raw in [REPAIRED, DIALECT, HOSTILE, VALID]:
        call(base, raw)
    report(base, {"kind": "hook_invalid", "tool": TOOL, "tool_use_id": "toolu_hook", "outcome": "invalid",
                  "raw": INVALID, "input": json.loads(INVALID), "edits": [],
                  "reason": {"code": "schema_mismatch", "message": "'/query': 42 is not of type \"string\""}})
    calls = [e for e in events(base) if "outcome" in e]
    assert [e["outcome"] for e in calls] == ["repaired", "repaired", "refused", "invalid"], calls

    driver.get(f"{base}/")
    wait_for(lambda: len(driver.find_elements(By.CSS_SELECTOR, "#calls article")) == 4)
    driver.execute_script("window.__same_page = 'yes'")

    listed = [int(a.get_attribute("data-event-id")) for a in driver.find_elements(By.CSS_SELECTOR, "#calls article")]
    assert listed == sorted((e["id"] for e in calls), reverse=True), f"newest first: {listed}"

    highlights = []
    for event in (e for e in calls if e["outcome"] == "repaired"):
        element = card(driver, event["id"])
        raw_bytes = event["raw"].encode()
        assert text_of(element.find_element(By.CSS_SELECTOR, ".badge")) == "repaired"
        for index, edit in enumerate(event["edits"]):
            start, end = edit["span"]
            mark = element.find_element(By.CSS_SELECTOR, f'mark[data-edit="{index}"]:not(.part)')
            expected = raw_bytes[start:end].decode()
            assert text_of(mark) == expected, f"{edit['kind']}: page shows {text_of(mark)!r}, raw bytes are {expected!r}"
            assert mark.get_attribute("title").startswith(edit["kind"]), mark.get_attribute("title")
            highlights.append({"kind": edit["kind"], "text": text_of(mark)})
        sent = text_of(element.find_element(By.CSS_SELECTOR, "pre.sent"))
        assert sent == event["sent"], f"what went out: {sent!r} vs {event['sent']!r}"
        assert text_of(element.find_element(By.CSS_SELECTOR, "pre.raw")) == event["raw"]

    refused = next(e for e in calls if e["outcome"] == "refused")
    element = card(driver, refused["id"])
    shown = text_of(element.find_element(By.CSS_SELECTOR, "pre.raw"))
    assert shown == HOSTILE, f"the raw input renders as text: {shown!r}"
    assert "schema_mismatch" in text_of(element.find_element(By.CSS_SELECTOR, ".reason"))
    injected = driver.find_elements(By.CSS_SELECTOR, "#calls script, #calls img")
    pwned = driver.execute_script("return typeof window.__pwned")

    wait_for(lambda: driver.find_element(By.CSS_SELECTOR, f'#tools tr[data-tool="{TOOL}"]'))
    # Read in one script: the live table is redrawn as events come, and a row found in one
    # call may be gone by the next (a stale element, not a wrong page).
    counts = {
        outcome: int(text)
        for outcome, text in driver.execute_script(
            "const row = document.querySelector(`#tools tr[data-tool=\"${arguments[0]}\"]`);"
            "return row ? [...row.querySelectorAll('td[data-outcome]')]"
            ".map(c => [c.getAttribute('data-outcome'), c.textContent.trim()]) : [];",
            TOOL,
        )
    }
    strict = [text_of(li) for li in driver.find_elements(By.CSS_SELECTOR, "#strict li")]

    newest = max(e["id"] for e in events(base))
    call(base, LATE)
    late = next(e for e in events(base, newest) if "outcome" in e)
    wait_for(lambda: driver.find_element(By.CSS_SELECTOR, "#calls article").get_attribute("data-event-id") == str(late["id"]))
    same_page = driver.execute_script("return window.__same_page") == "yes"
    wait_for(lambda: text_of(row_cell(driver, "repaired")) == "3")
    invalid = next(e for e in calls if e["outcome"] == "invalid")
    invalid_card = card(driver, invalid["id"])
    return {
        "listed": [e["outcome"] for e in calls],
        "highlights": highlights,
        "script_nodes": len(injected),
        "pwned": pwned,
        "counts": counts,
        "strict": strict,
        "late_on_top": True,
        "invalid_badge": text_of(invalid_card.find_element(By.CSS_SELECTOR, ".badge")),
        "invalid_reason": text_of(invalid_card.find_element(By.CSS_SELECTOR, ".reason")),
        "same_page": same_page,
    }


def row_cell(driver, outcome):
    return driver.find_element(By.CSS_SELECTOR, f'#tools tr[data-tool="{TOOL}"] td[data-outcome="{outcome}"]')


def check_redacted(driver, base):
    call(base, REPAIRED)
    driver.get(f"{base}/")
    element = wait_for(lambda: driver.find_element(By.CSS_SELECTOR, "#calls article"))
    page = text_of(driver.find_element(By.TAG_NAME, "body"))
    return {
        "outcome": text_of(element.find_element(By.CSS_SELECTOR, ".badge")),
        "hidden_note": "Input hidden (--redact-inputs)." in text_of(element),
        "raw_shown": "smörgåsbord" in page or "token machine" in page,
        "marks": len(element.find_elements(By.CSS_SELECTOR, "mark")),
    }


def main():
    base, redacted = sys.argv[1], sys.argv[2]
    screenshot = sys.argv[sys.argv.index("--screenshot") + 1] if "--screenshot" in sys.argv else None
    profile = tempfile.mkdtemp(prefix="toolmend-chromium-")
    driver = browser(profile)
    try:
        result = {"page": check_page(driver, base)}
        if screenshot:
            driver.set_window_size(1400, 1250)
            driver.execute_script("window.scrollTo(0, 0)")
            time.sleep(0.3)
            driver.save_screenshot(screenshot)
        result["redacted"] = check_redacted(driver, redacted)
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
