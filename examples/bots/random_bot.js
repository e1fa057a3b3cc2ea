#!/usr/bin/env node
// A complete cardenvs bot in JavaScript (Node.js, no packages): reads the harness's JSON lines on stdin and
// answers each "act" message with one line holding an action index.
//
//   cardenvs eval --game ring_rang --agents exec:path=examples/bots/random_bot.js rules_strong
//
// The protocol: docs/bot_protocol.md. This bot plays a legal action picked by a hash of what it was shown, so
// it is random-looking yet reproducible (it needs no seed: start's seed is there for bots that want one).
"use strict";
const readline = require("readline");

// FNV-1a over a string: a small deterministic hash.
function hash(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

function choose(message) {
  const legal = message.legal;
  return legal[hash(JSON.stringify(message.observation)) % legal.length];
}

const input = readline.createInterface({ input: process.stdin, terminal: false });
input.on("line", (line) => {
  const message = JSON.parse(line);
  if (message.type === "act") {  // every other type (hello, start, bye, ...) needs no answer
    process.stdout.write(choose(message) + "\n");
  }
});
