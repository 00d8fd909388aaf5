/**
 * A GitHub App's credentials for tests: a real RSA key pair (the private key as GitHub hands it
 * out, PKCS#1 PEM) and the check GitHub makes of the JWT an App signs with it.
 */
import { createVerify, generateKeyPairSync } from "node:crypto";

export function appKeyPair(): { privateKey: string; publicKey: string } {
  return generateKeyPairSync("rsa", {
    modulusLength: 2048,
    privateKeyEncoding: { type: "pkcs1", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  });
}

/**
 * The claims of `jwt` (an `Authorization` header's `Bearer …` or the bare token) when its
 * RS256 signature verifies with `publicKey`; undefined otherwise.
 */
export function verifiedJwt(
  jwt: string | undefined,
  publicKey: string,
): { iss?: unknown; exp?: number } | undefined {
  const [h, p, s] = (jwt ?? "").replace(/^bearer /i, "").split(".");
  if (!h || !p || !s) return undefined;
  const ok = createVerify("RSA-SHA256")
    .update(`${h}.${p}`)
    .verify(publicKey, Buffer.from(s, "base64url"));
  return ok ? JSON.parse(Buffer.from(p, "base64url").toString("utf8")) : undefined;
}
