"""The real anthropic Python SDK against the fake API, directly and through toolmend.

Usage: anthropic_sdk_check.py DIRECT_URL PROXY_URL. The fake picks the stream by model name.
Prints one JSON object: per model, the final message both ways and whether the raw bytes the
SDK received were identical."""
import json
import sys

import anthropic

DIRECT, PROXY = sys.argv[1], sys.argv[2]
TOOLS = [{
    "name": "search",
    "description": "Search the regulation database",
    "input_schema": {
        "type": "object",
        "properties": {
            "jurisdiction": {"type": "string", "enum": ["se", "no", "dk", "fi"]},
            "terms": {"type": "array", "items": {"type": "string"}},
            "limit": {"type": "integer", "minimum": 1},
        },
        "required": ["jurisdiction", "terms"],
        "additionalProperties": False,
    },
}]


def request(model):
    return dict(model=model, max_tokens=256, tools=TOOLS,
                messages=[{"role": "user", "content": "Payout rules for token machines in Sweden?"}])


def final_message(base_url, model):
    client = anthropic.Anthropic(base_url=base_url, api_key="sk-ant-sdk-test", max_retries=0)
    try:
        with client.messages.stream(**request(model)) as stream:
            return stream.get_final_message().model_dump(mode="json")
    except Exception as error:  # the SDK's view of a stream it cannot use
        return {"error": type(error).__name__}


def raw_bytes(base_url, model):
    client = anthropic.Anthropic(base_url=base_url, api_key="sk-ant-sdk-test", max_retries=0)
    with client.messages.with_streaming_response.create(stream=True, **request(model)) as response:
        return b"".join(response.iter_bytes())


result = {}
for model in ["seed", "valid", "text"]:
    result[model] = {
        "direct": final_message(DIRECT, model),
        "proxied": final_message(PROXY, model),
        "same_bytes": raw_bytes(DIRECT, model) == raw_bytes(PROXY, model),
    }
print(json.dumps(result))
