import assert from "node:assert/strict";
import { test } from "node:test";
import { format } from "../src/format.js";

test("format sorts and joins the values", () => {
  assert.equal(format([3, 1, 2]), "1, 2, 3");
});

test("format does not mutate its argument", () => {
  const values = [3, 1, 2];
  format(values);
  assert.deepEqual(values, [3, 1, 2]);
});

test("format of an empty list is empty", () => {
  assert.equal(format([]), "");
});
