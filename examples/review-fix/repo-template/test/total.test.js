import assert from "node:assert/strict";
import { test } from "node:test";
import { formatTotal } from "../src/format.js";

test("formatTotal sums the values", () => {
  assert.equal(formatTotal([2, 3]), "total: 5");
});

test("formatTotal of an empty list is zero", () => {
  assert.equal(formatTotal([]), "total: 0");
});
