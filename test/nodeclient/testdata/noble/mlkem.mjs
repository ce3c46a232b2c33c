// mlkem.mjs: the @noble/post-quantum side of noble_test.go. It reads one
// JSON line per case from stdin ({set, seed, ek, ct}: hex), derives the key
// pair from the token's seed, decapsulates the token's ciphertext and
// encapsulates to the token's public key, and writes one JSON line back
// ({ekMatch, k1, ct2, k2}: hex).
import { ml_kem512, ml_kem768, ml_kem1024 } from '@noble/post-quantum/ml-kem.js';
import { createInterface } from 'node:readline';

const kems = { 'ML-KEM-512': ml_kem512, 'ML-KEM-768': ml_kem768, 'ML-KEM-1024': ml_kem1024 };
const hex = (b) => Buffer.from(b).toString('hex');
const bytes = (h) => new Uint8Array(Buffer.from(h, 'hex'));

for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const c = JSON.parse(line);
  const kem = kems[c.set];
  const { publicKey, secretKey } = kem.keygen(bytes(c.seed));
  const k1 = kem.decapsulate(bytes(c.ct), secretKey);
  const { cipherText, sharedSecret } = kem.encapsulate(bytes(c.ek));
  process.stdout.write(JSON.stringify({ ekMatch: hex(publicKey) === c.ek, k1: hex(k1), ct2: hex(cipherText), k2: hex(sharedSecret) }) + '\n');
}
