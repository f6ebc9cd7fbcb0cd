// read_file of an image and of a PDF through the official TypeScript MCP SDK's client: the SDK
// parses the result against its CallToolResult schema (an `image` block needs `data` and
// `mimeType`) and, in the structured shape, validates structuredContent against the tool's
// outputSchema. In either shape no text block holds the image's base64.
//
// Usage: node ts_media_test.cjs SNEAKY_MCP_BINARY WORKSPACE_ROOT [structured|text]
//
// WORKSPACE_ROOT holds shot.png (48 x 20), big.png (2400 x 600) and doc.pdf (tests/pdf/groff.pdf:
// three pages). Run by tests/suite/media.rs with NODE_PATH pointing at the packages
// .ci/setup-hosts.sh installs.
'use strict';

const fs = require('fs');
const path = require('path');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { CallToolResultSchema } = require('@modelcontextprotocol/sdk/types.js');

function check(condition, message) {
  if (!condition) {
    throw new Error(`check failed: ${message}`);
  }
  console.log(`ok: ${message}`);
}

// Width and height from a PNG's IHDR, or a JPEG's first frame header.
function size(bytes) {
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) {
    return [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];
  }
  let at = 2;
  while (at + 9 < bytes.length) {
    const marker = bytes[at + 1];
    const len = bytes.readUInt16BE(at + 2);
    if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker)) {
      return [bytes.readUInt16BE(at + 7), bytes.readUInt16BE(at + 5)];
    }
    at += 2 + len;
  }
  return null;
}

// No text block carries base64: not the image's data, nor any long run of base64 characters.
function noBase64Text(result, data, what) {
  const texts = result.content.filter((c) => c.type === 'text').map((c) => c.text);
  check(texts.every((t) => !t.includes(data.slice(0, 64)) && !/[A-Za-z0-9+/]{200,}/.test(t)),
    `${what}: no text block holds base64 (${texts.map((t) => t.length)} characters of text)`);
  check(result.content.filter((c) => c.type === 'image').length === 1, `${what}: one image block`);
}

async function main() {
  const [binary, root, shape = 'structured'] = process.argv.slice(2);
  if (!root || !['structured', 'text'].includes(shape)) {
    console.error('usage: ts_media_test.cjs SNEAKY_MCP_BINARY WORKSPACE_ROOT [structured|text]');
    process.exit(2);
  }
  const structured = shape === 'structured';
  const transport = new StdioClientTransport({
    command: binary,
    args: ['--root', root, '--structured-content', structured ? 'on' : 'off'],
    env: process.env,
    stderr: 'inherit',
  });
  const client = new Client({ name: 'sneaky-ts-media-test', version: '1.0.0' });
  await client.connect(transport);
  await client.listTools();

  const small = await client.callTool({ name: 'read_file', arguments: { file_path: 'shot.png' } });
  check(CallToolResultSchema.safeParse(small).success, 'the result parses as a CallToolResult');
  check(small.isError === false, 'read_file of a PNG succeeds');
  const image = small.content.find((c) => c.type === 'image');
  check(image !== undefined, 'the result holds an image block');
  check(image.mimeType === 'image/png', `its mimeType is image/png (${image.mimeType})`);
  const bytes = Buffer.from(image.data, 'base64');
  check(bytes.equals(fs.readFileSync(path.join(root, 'shot.png'))), 'its data is the file, in base64');
  const text = small.content.find((c) => c.type === 'text');
  check(text && text.text === 'shot.png (PNG image, 48x20 pixels)', `the text says what it is: ${text && text.text}`);
  noBase64Text(small, image.data, 'shot.png');
  if (structured) {
    check(small.structuredContent.mime_type === 'image/png' && small.structuredContent.width === 48,
      'structuredContent (validated by the SDK against outputSchema) has mime_type and width');
  } else {
    check(small.structuredContent === undefined && small.content.length === 2,
      'text shape: the text and the image block, no structuredContent');
  }

  const big = await client.callTool({ name: 'read_file', arguments: { file_path: 'big.png' } });
  check(CallToolResultSchema.safeParse(big).success, 'the scaled result parses as a CallToolResult');
  const scaled = big.content.find((c) => c.type === 'image');
  const dims = size(Buffer.from(scaled.data, 'base64'));
  check(dims && dims[0] === 2000 && dims[1] === 500, `the 2400 x 600 image comes scaled to 2000 x 500 (${dims})`);
  noBase64Text(big, scaled.data, 'big.png');
  const said = big.content.find((c) => c.type === 'text').text;
  check(said === 'big.png (PNG image, 2400x600 pixels, scaled down to 2000x500)',
    `the text says it was scaled: ${said}`);
  if (structured) {
    check(big.structuredContent.truncated === true && big.structuredContent.original_width === 2400,
      'structuredContent says it was scaled from 2400 px');
  }

  const pdf = await client.callTool({ name: 'read_file', arguments: { file_path: 'doc.pdf', offset: 2, limit: 1 } });
  check(CallToolResultSchema.safeParse(pdf).success, 'the PDF result parses as a CallToolResult');
  check(pdf.isError === false && pdf.content.length === 1 && pdf.content[0].type === 'text',
    'read_file of a PDF is one text block');
  const pages = pdf.content[0].text;
  check(pages.startsWith('doc.pdf (PDF, page 2 of 3; read on with offset 3)\n--- page 2 ---\n')
    && pages.includes('The second page says hello.'), "ok: the PDF's second page comes as text");
  if (structured) {
    check(pdf.structuredContent.total_pages === 3 && pdf.structuredContent.pages.length === 1
      && pdf.structuredContent.pages[0].number === 2
      && pdf.structuredContent.mime_type === 'application/pdf',
    'structuredContent (validated against outputSchema) has the page, its number and total_pages');
  } else {
    check(pdf.structuredContent === undefined, 'text shape: no structuredContent for the PDF');
  }

  await client.close();
  console.log(`all TypeScript media checks passed (${shape} shape)`);
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : e);
  process.exit(1);
});
