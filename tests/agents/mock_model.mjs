// A mock model endpoint on the loopback for real agent hosts (tests/agents/hosts_test.mjs): it
// speaks the three APIs the hosts call — OpenAI Responses (Codex CLI), OpenAI Chat Completions
// (opencode through @ai-sdk/openai-compatible) and Anthropic Messages (Claude Code) — streaming
// or not, answers each request with the next scripted call of a sneaky tool, and records what
// each tool call's result looks like when the host hands it back to the model.
//
// Every run of a host gets its own path prefix (`http://127.0.0.1:PORT/RUN/…`), so that several
// hosts can talk to one mock at once. Which step comes next is read from the conversation
// itself (the mock's call ids carry the step: `call_sneaky_N`, `toolu_sneaky_N`), so a host's
// side requests (a title, a token count, a retry) never move the script on. A request that
// offers none of the sneaky tools (a host's title or summary request) gets a short text.
'use strict';

import fs from 'node:fs';
import http from 'node:http';

const CALL_ID = /^(?:call|toolu)_sneaky_(\d+)$/;

// The name a host gives a sneaky tool (`mcp__sneaky__read_file`, `sneaky_read_file`, or
// `read_file` inside the Responses namespace `mcp__sneaky`), among the tools it offers.
function findTool(offered, tool) {
  return offered.find((t) => t.name === tool && t.namespace && t.namespace.includes('sneaky'))
    || offered.find((t) => !t.namespace && t.name.includes('sneaky')
      && (t.name.endsWith(`__${tool}`) || t.name.endsWith(`_${tool}`)));
}

function offeredTools(body) {
  const out = [];
  for (const t of body.tools || []) {
    if (t.type === 'namespace') {
      for (const inner of t.tools || []) {
        out.push({ name: inner.name, namespace: t.name });
      }
    } else if (t.name) {
      out.push({ name: t.name });
    } else if (t.function && t.function.name) {
      out.push({ name: t.function.name });
    }
  }
  return out;
}

function imagePart(mime, data) {
  return { type: 'image', mime, data };
}

// A data: URL's MIME type and base64 data.
function fromDataUrl(url) {
  const m = /^data:([^;,]+);base64,(.*)$/s.exec(url || '');
  return m ? imagePart(m[1], m[2]) : { type: 'other', value: String(url).slice(0, 80) };
}

// The parts of an Anthropic tool_result's content.
function anthropicParts(content) {
  if (typeof content === 'string') {
    return [{ type: 'text', text: content }];
  }
  return (content || []).map((b) => {
    if (b.type === 'text') return { type: 'text', text: b.text };
    if (b.type === 'image' && b.source) return imagePart(b.source.media_type, b.source.data);
    return { type: 'other', value: b.type };
  });
}

// The parts of a Responses function_call_output's output.
function responsesParts(output) {
  if (typeof output === 'string') {
    return [{ type: 'text', text: output }];
  }
  return (output || []).map((p) => {
    if (p.type === 'input_text' || p.type === 'output_text') return { type: 'text', text: p.text };
    if (p.type === 'input_image') return fromDataUrl(p.image_url);
    return { type: 'other', value: p.type };
  });
}

// The parts of a Chat Completions message's content.
function chatParts(content) {
  if (typeof content === 'string') {
    return [{ type: 'text', text: content }];
  }
  return (content || []).map((p) => {
    if (p.type === 'text') return { type: 'text', text: p.text };
    if (p.type === 'image_url') return fromDataUrl(p.image_url && p.image_url.url);
    return { type: 'other', value: p.type };
  });
}

// Each tool result of the mock's calls in the conversation: [step, parts].
function results(api, body) {
  const out = [];
  if (api === 'anthropic') {
    for (const m of body.messages || []) {
      for (const b of Array.isArray(m.content) ? m.content : []) {
        const step = CALL_ID.exec(b.tool_use_id || '');
        if (b.type === 'tool_result' && step) {
          out.push([Number(step[1]), anthropicParts(b.content), !!b.is_error]);
        }
      }
    }
  } else if (api === 'responses') {
    for (const item of body.input || []) {
      const step = CALL_ID.exec(item.call_id || '');
      if (item.type === 'function_call_output' && step) {
        out.push([Number(step[1]), responsesParts(item.output), false]);
      }
    }
  } else {
    // Chat: a tool message per result; media a host could not put there follow in a user
    // message (opencode: "Attached media from tool result:"), which belongs to the result
    // just before it.
    let last = null;
    for (const m of body.messages || []) {
      const step = CALL_ID.exec(m.tool_call_id || '');
      if (m.role === 'tool' && step) {
        last = [Number(step[1]), chatParts(m.content), false];
        out.push(last);
      } else if (m.role === 'user' && last && Array.isArray(m.content)
        && m.content.some((p) => p.type === 'image_url')) {
        last[1].push(...chatParts(m.content));
        last = null;
      } else {
        last = null;
      }
    }
  }
  return out;
}

// A host that defers MCP tools (Claude Code 2.1.2xx and later: their names are listed in a
// message, their schemas come through its ToolSearch tool) gets, as from a model, a ToolSearch
// call that selects the tool, once per step; its id (`toolu_search_N`) is not a step's.
function searchFor(body, text, offered, tool, prefix, step) {
  const search = offered.find((t) => t.name === 'ToolSearch');
  const named = new RegExp(`mcp__[A-Za-z0-9_-]*sneaky[A-Za-z0-9_-]*__${tool}\\b`).exec(text);
  if (!search || !named) return null;
  const id = `${prefix}_search_${step}`;
  const asked = JSON.stringify(body.messages || []).includes(`"${id}"`);
  return asked ? null : { id, name: 'ToolSearch', args: { query: `select:${named[0]}` } };
}

function sse(res, events) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const [event, data] of events) {
    const payload = typeof data === 'string' ? data : JSON.stringify(data);
    res.write(`${event ? `event: ${event}\n` : ''}data: ${payload}\n\n`);
  }
  res.end();
}

function json(res, status, value) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

const TEXT_DONE = 'All done.';

function anthropicReply(body, call, res, serial) {
  const message = {
    id: `msg_mock_${serial}`, type: 'message', role: 'assistant', model: body.model,
    content: [], stop_reason: null, stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 1 },
  };
  const stop = call ? 'tool_use' : 'end_turn';
  if (!body.stream) {
    const content = call
      ? [{ type: 'tool_use', id: call.id, name: call.name, input: call.args }]
      : [{ type: 'text', text: TEXT_DONE }];
    json(res, 200, { ...message, content, stop_reason: stop, usage: { input_tokens: 10, output_tokens: 5 } });
    return;
  }
  const block = call
    ? { type: 'tool_use', id: call.id, name: call.name, input: {} }
    : { type: 'text', text: '' };
  const delta = call
    ? { type: 'input_json_delta', partial_json: JSON.stringify(call.args) }
    : { type: 'text_delta', text: TEXT_DONE };
  sse(res, [
    ['message_start', { type: 'message_start', message }],
    ['content_block_start', { type: 'content_block_start', index: 0, content_block: block }],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta }],
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    ['message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } }],
    ['message_stop', { type: 'message_stop' }],
  ]);
}

function responsesReply(body, call, res, serial) {
  const id = `resp_mock_${serial}`;
  const item = call
    ? {
      type: 'function_call', id: `fc_mock_${serial}`, call_id: call.id,
      ...(call.namespace ? { namespace: call.namespace } : {}),
      name: call.name, arguments: JSON.stringify(call.args), status: 'completed',
    }
    : {
      type: 'message', id: `msg_mock_${serial}`, role: 'assistant', status: 'completed',
      content: [{ type: 'output_text', text: TEXT_DONE, annotations: [] }],
    };
  const usage = {
    input_tokens: 10, input_tokens_details: { cached_tokens: 0 },
    output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15,
  };
  const response = { id, object: 'response', created_at: 0, model: body.model };
  if (!body.stream) {
    json(res, 200, { ...response, status: 'completed', output: [item], usage });
    return;
  }
  sse(res, [
    ['response.created', { type: 'response.created', response: { ...response, status: 'in_progress', output: [] } }],
    ['response.output_item.added', { type: 'response.output_item.added', output_index: 0, item }],
    ['response.output_item.done', { type: 'response.output_item.done', output_index: 0, item }],
    ['response.completed', { type: 'response.completed', response: { ...response, status: 'completed', output: [item], usage } }],
  ]);
}

function chatReply(body, call, res, serial) {
  const base = { id: `chatcmpl_mock_${serial}`, object: 'chat.completion.chunk', created: 0, model: body.model };
  const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
  const finish = call ? 'tool_calls' : 'stop';
  const toolCall = call && {
    id: call.id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args) },
  };
  if (!body.stream) {
    const message = call
      ? { role: 'assistant', content: null, tool_calls: [toolCall] }
      : { role: 'assistant', content: TEXT_DONE };
    json(res, 200, { ...base, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: finish }], usage });
    return;
  }
  const delta = call
    ? { role: 'assistant', tool_calls: [{ index: 0, ...toolCall }] }
    : { role: 'assistant', content: TEXT_DONE };
  sse(res, [
    [null, { ...base, choices: [{ index: 0, delta, finish_reason: null }] }],
    [null, { ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }], usage }],
    [null, '[DONE]'],
  ]);
}

// The mock. `scripts` maps a run's name (its path prefix) to its steps, each
// `{tool, args}`. Records: `records[run][step] = {parts, isError, api}` (the first time each
// result is seen), and `requests[run]` counts what was asked, by API.
export class MockModel {
  // `log`: a file that gets every request (method, path, body) as a JSON line, for looking
  // into what a new host release sends.
  constructor(scripts, log) {
    this.scripts = scripts;
    this.log = log ? fs.createWriteStream(log) : null;
    this.records = {};
    this.requests = {};
    this.unknown = [];
    this.serial = 0;
    this.server = http.createServer((req, res) => this.handle(req, res));
  }

  listen() {
    return new Promise((resolve) => {
      this.server.listen(0, '127.0.0.1', () => resolve(this.server.address().port));
    });
  }

  close() {
    this.server.close();
  }

  handle(req, res) {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      try {
        this.answer(req, Buffer.concat(chunks).toString('utf8'), res);
      } catch (e) {
        json(res, 500, { error: { message: `mock: ${e.stack || e}` } });
      }
    });
  }

  answer(req, text, res) {
    if (this.log) {
      this.log.write(`${JSON.stringify({ method: req.method, url: req.url, body: text })}\n`);
    }
    const url = new URL(req.url, 'http://mock');
    const [, run, ...rest] = url.pathname.split('/');
    const path = `/${rest.join('/')}`;
    const script = this.scripts[run];
    if (!script) {
      this.unknown.push(`${req.method} ${req.url}`);
      json(res, 404, { error: { message: `mock: no run ${run}` } });
      return;
    }
    const counts = (this.requests[run] = this.requests[run] || {});
    const note = (what) => { counts[what] = (counts[what] || 0) + 1; };
    if (req.method !== 'POST') {
      note(`${req.method} ${path}`);
      if (path.endsWith('/models')) {
        json(res, 200, { object: 'list', data: [{ id: 'mock-model', object: 'model', created: 0, owned_by: 'mock' }] });
      } else {
        json(res, 200, {});
      }
      return;
    }
    const body = JSON.parse(text || '{}');
    let api;
    if (path.endsWith('/messages/count_tokens')) {
      note('anthropic count_tokens');
      json(res, 200, { input_tokens: 10 });
      return;
    } else if (path.endsWith('/messages')) {
      api = 'anthropic';
    } else if (path.endsWith('/responses')) {
      api = 'responses';
    } else if (path.endsWith('/chat/completions')) {
      api = 'chat';
    } else {
      note(`POST ${path}`);
      json(res, 404, { error: { message: `mock: no ${path}` } });
      return;
    }
    note(api);
    const seen = results(api, body);
    const runRecords = (this.records[run] = this.records[run] || {});
    for (const [step, parts, isError] of seen) {
      if (!(step in runRecords)) {
        runRecords[step] = { api, parts, isError };
      }
    }
    const offered = offeredTools(body);
    const done = seen.reduce((most, [step]) => Math.max(most, step + 1), 0);
    let call = null;
    if (done < script.length) {
      const step = script[done];
      const found = findTool(offered, step.tool);
      const prefix = api === 'anthropic' ? 'toolu' : 'call';
      if (found) {
        call = { id: `${prefix}_sneaky_${done}`, name: found.name, namespace: found.namespace, args: step.args };
      } else {
        call = searchFor(body, text, offered, step.tool, prefix, done);
      }
    }
    this.serial += 1;
    if (api === 'anthropic') anthropicReply(body, call, res, this.serial);
    else if (api === 'responses') responsesReply(body, call, res, this.serial);
    else chatReply(body, call, res, this.serial);
  }
}
