"""An agent's side of ecp's MCP server, with the official MCP Python SDK.

Driven by node/tests/it/mcp.rs, which loads the skills, starts the node and
passes where things are. Over each transport — `ecp-node mcp` on stdio, and
the node's /mcp over streamable HTTP with the API token — it lists the
tools, searches, reads the best hit with its provenance, gets a clear error
for an unknown skill, never sees the quarantined skill, and reports an
outcome. Any failed check raises: the exit status is not 0 and the
traceback says which check.

usage: agent.py --bin ECP_NODE --data DIR --skills DIR --url URL/mcp
                --query Q --expect NAME --hidden NAME --count N
       (the API token in the environment variable ECP_MCP_TOKEN)
"""

import argparse
import asyncio
import json
import os
import sys

from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

TOOLS = {"search_skills", "read_skill", "list_skill_files", "read_skill_file", "report_outcome"}


def text_of(result):
    return "\n".join(block.text for block in result.content if getattr(block, "text", None) is not None)


def check(condition, what):
    if not condition:
        raise AssertionError(what)


async def exercise(label, client, args):
    listed = await client.list_tools()
    names = {tool.name for tool in listed.tools}
    check(names == TOOLS, f"{label}: tools {sorted(names)}")
    for tool in listed.tools:
        check(tool.description and len(tool.description) > 60, f"{label}: {tool.name} has a description")
        check(tool.input_schema.get("type") == "object", f"{label}: {tool.name} has a JSON schema")

    found = await client.call_tool("search_skills", {"query": args.query, "limit": 5})
    check(not found.is_error, f"{label}: search failed: {text_of(found)}")
    hits = found.structured_content["results"]
    check(hits and hits[0]["name"] == args.expect, f"{label}: best hit {[h['name'] for h in hits]}")
    for key in ("name", "description", "confidence", "origin", "score"):
        check(key in hits[0], f"{label}: a hit has {key}")
    check("untrusted" in text_of(found), f"{label}: search says descriptions are untrusted")

    read = await client.call_tool("read_skill", {"name": args.expect})
    check(not read.is_error, f"{label}: read failed: {text_of(read)}")
    skill = read.structured_content
    check(skill["provenance"]["origin"] == hits[0]["origin"], f"{label}: provenance origin {skill['provenance']}")
    check(skill["provenance"]["path"], f"{label}: provenance path")
    check(isinstance(skill["scan"]["findings"], list), f"{label}: scan findings")
    said = text_of(read)
    check("untrusted" in said.lower(), f"{label}: read says the text is untrusted")
    check("<<<UNTRUSTED SKILL TEXT id=" in said and "<<<END UNTRUSTED SKILL TEXT id=" in said, f"{label}: markers")
    check(f'origin="{skill["origin"]}"' in said, f"{label}: the marker names the origin")
    check(hits[0]["description"] in said, f"{label}: the text is the skill's")

    unknown = await client.call_tool("read_skill", {"name": "no-such-skill"})
    check(unknown.is_error and "no-such-skill" in text_of(unknown), f"{label}: unknown skill: {text_of(unknown)}")
    too_many = await client.call_tool("search_skills", {"query": args.query, "limit": 101})
    check(too_many.is_error and "limit" in text_of(too_many), f"{label}: limit 101: {text_of(too_many)}")

    hidden = await client.call_tool("search_skills", {"query": args.hidden.split("-")[0], "limit": 100})
    check(not hidden.is_error, f"{label}: search for the hidden skill: {text_of(hidden)}")
    check(all(h["name"] != args.hidden for h in hidden.structured_content["results"]), f"{label}: hidden found")
    held = await client.call_tool("read_skill", {"name": args.hidden})
    check(held.is_error, f"{label}: the quarantined skill was read")

    uris, cursor = [], None
    while True:
        page = await client.list_resources(cursor=cursor) if cursor else await client.list_resources()
        uris += [str(r.uri) for r in page.resources]
        cursor = page.next_cursor
        if not cursor:
            break
    check(len([u for u in uris if u.endswith("/SKILL.md")]) == args.count, f"{label}: {len(uris)} resources")
    check(not any(args.hidden in u for u in uris), f"{label}: the quarantined skill is a resource")
    resource = await client.read_resource(f"skill://{args.expect}/SKILL.md")
    check(hits[0]["description"] in resource.contents[0].text, f"{label}: the resource is the SKILL.md")

    reported = await client.call_tool("report_outcome", {"name": args.expect, "outcome": "success"})
    check(not reported.is_error, f"{label}: report failed: {text_of(reported)}")
    return {"transport": label, "best": hits[0]["name"], "resources": len(uris),
            "successes": reported.structured_content["score"]["successes"]}


async def main():
    parser = argparse.ArgumentParser()
    for flag in ("--bin", "--data", "--skills", "--url", "--query", "--expect", "--hidden"):
        parser.add_argument(flag, required=True)
    parser.add_argument("--count", type=int, required=True)
    args = parser.parse_args()

    stdio = StdioServerParameters(
        command=args.bin, args=["mcp", "--data", args.data, "--skills-dir", args.skills]
    )
    async with Client(stdio, read_timeout_seconds=60) as client:
        print(json.dumps(await exercise("stdio", client, args)), flush=True)

    token = os.environ["ECP_MCP_TOKEN"]
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with http:
        async with Client(streamable_http_client(args.url, http_client=http), read_timeout_seconds=60) as client:
            print(json.dumps(await exercise("http", client, args)), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)
