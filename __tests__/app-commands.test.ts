/**
 * The App's comment commands and the ledger its status comment carries, as pure functions: a
 * command counts only on a prose line of its own; a ledger whose fields are not what the App
 * writes is no ledger.
 */
import { describe, expect, it } from "vitest";
import { ledgerMarker, parseCommentCommand, parseLedger } from "../src/core/app/triggers.ts";

const HEAD = "a".repeat(40);

describe("comment commands", () => {
  it("/terfyn resume, stop and status on a line of their own; never in code or a quote", () => {
    expect(parseCommentCommand("/terfyn resume")).toEqual({ kind: "resume" });
    expect(parseCommentCommand("The API is back.\n\n/terfyn  resume\n")).toEqual({
      kind: "resume",
    });
    expect(parseCommentCommand("/terfyn stop")).toEqual({ kind: "stop" });
    expect(parseCommentCommand("/terfyn status")).toEqual({ kind: "status" });
    expect(parseCommentCommand("```\n/terfyn resume\n```")).toBeUndefined();
    expect(parseCommentCommand("> /terfyn resume")).toBeUndefined();
    expect(parseCommentCommand("please /terfyn resume")).toBeUndefined();
    expect(parseCommentCommand("/terfyn resume now")).toBeUndefined();
  });
});

describe("the ledger", () => {
  const ledger = { run: "r1", pull_request: 7, head: HEAD, phase: "build" };
  it("carries an interrupted run, and refuses any other value there", () => {
    expect(parseLedger(ledgerMarker({ ...ledger, interrupted: true }))).toMatchObject({
      phase: "build",
      interrupted: true,
    });
    expect(parseLedger(ledgerMarker(ledger))?.interrupted).toBeUndefined();
    const forged = ledgerMarker({ ...ledger, interrupted: "yes" as unknown as true });
    expect(parseLedger(forged)).toBeUndefined();
  });
});
