"""Cursor hook payloads, recorded from the published contract (no Cursor binary runs offline here).

Sources, read 2026-12-02:
- Cursor's hooks reference, https://cursor.com/docs/agent/hooks: `postToolUse` fires after every tool with
  `tool_name`, `tool_input`, `tool_output`, `tool_use_id`, `cwd`, `duration` beside the common fields
  (`conversation_id`, `generation_id`, `model`, `hook_event_name`, `cursor_version`, `workspace_roots`,
  `user_email`, `transcript_path`); its answer may carry `additional_context` and `updated_mcp_tool_output`,
  the latter honoured for MCP tools only.
- MCP tool names: `MCP:<server>:<tool>` in https://cdot65.github.io/prisma-airs-cursor-hooks/reference/cursor-hooks-api/
  (postToolUse `tool_name`, "e.g., MCP:server:tool, Bash, Write, Edit"); `MCP:<tool>` in context-mode's Cursor adapter
  (https://cdn.jsdelivr.net/npm/context-mode@1.0.168/build/adapters/cursor/hooks.d.ts, "Cursor MCP wire shape: `MCP:`").
  Both forms are recorded.
- Shell's `tool_output` is a JSON string `{"output", "exitCode"}`; the replacement is not honoured for it (the same
  reference: `updated_mcp_tool_output` is for MCP tools only).
- `afterMCPExecution` (`tool_name`, `tool_input` as a JSON string, `result_json`, `duration`) is observe-only:
  https://cupcake.eqtylab.io/reference/harnesses/cursor ("After action | No | {} (fire-and-forget)").

`ISSUES` is the MCP result text: a GitHub-style issue list built here (no third-party data copied).
"""
import json

ISSUES = json.dumps([{'number': i, 'title': f'Crash when saving file {i}', 'state': 'open' if i % 3 else 'closed',
                      'labels': [{'name': 'bug'}], 'user': {'login': 'octocat', 'id': 583231},
                      'comments': i % 5, 'created_at': f'2026-11-{1 + i % 28:02d}T10:00:00Z'} for i in range(80)], indent=2)

COMMON = {'conversation_id': '5b0d6c1e-8a4f-4f1e-9d8e-2b7f1c3a9e10', 'generation_id': 'f2a9c0d4-1b7e-4c55-a0e2-6d3b8e71c4aa',
          'model': 'claude-sonnet-4-5', 'cursor_version': '2.0.77', 'user_email': 'user@example.com', 'transcript_path': None}


def post_tool_use(tool_name: str, tool_output, workspace: str, tool_input=None) -> dict:
    "A `postToolUse` event as Cursor sends it (reference above)."
    return {**COMMON, 'hook_event_name': 'postToolUse', 'workspace_roots': [workspace], 'cwd': workspace,
            'tool_name': tool_name, 'tool_input': tool_input if tool_input is not None else {'owner': 'octo', 'repo': 'demo'},
            'tool_output': tool_output, 'tool_use_id': 'toolu_01', 'duration': 250}


def mcp_result(text: str, **extra) -> str:
    "An MCP tool result as `tool_output`: the CallToolResult as a JSON string."
    return json.dumps({'content': [{'type': 'text', 'text': text}], **extra})


def shell_output(text: str) -> str:
    return json.dumps({'output': text, 'exitCode': 0})


def after_mcp_execution(tool_name: str, result: str, workspace: str) -> dict:
    return {**COMMON, 'hook_event_name': 'afterMCPExecution', 'workspace_roots': [workspace], 'tool_name': tool_name,
            'tool_input': json.dumps({'owner': 'octo'}), 'result_json': result, 'duration': 250}
