#!/usr/bin/env node
// The example's release: reads { version, ticket } as JSON on stdin, appends one line to
// DEPLOY_LOG (default deploys.log in the project root) and prints what it did as JSON.
import { appendFileSync, readFileSync } from "node:fs";

const input = JSON.parse(readFileSync(0, "utf8"));
const log = process.env.DEPLOY_LOG ?? "deploys.log";
appendFileSync(log, `${JSON.stringify({ version: input.version, ticket: input.ticket })}\n`);
process.stdout.write(`${JSON.stringify({ released: input.version, ticket: input.ticket })}\n`);
