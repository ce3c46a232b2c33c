// Cross-check of the post-quantum signatures with a second implementation,
// @noble/post-quantum: the module's ML-DSA-65 and SLH-DSA-SHA2-128f
// signatures (made through pkcs11js, hedged, with no parameter: the empty
// context) must verify with noble, and noble's signatures of its own keys,
// imported as public keys, must verify through C_Verify; a changed
// signature must fail both ways.
//
// Usage: node pq.mjs MODULE TOKEN_LABEL USER_PIN (NODE_PATH as suite.js).
// Prints one JSON line per case: {"case","ok","err"}.
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(path.join(process.env.NODE_PATH, "x.js"));
const pkcs11js = require("pkcs11js");
const { ml_dsa65 } = await import(path.join(process.env.NODE_PATH, "@noble/post-quantum/ml-dsa.js"));
const { slh_dsa_sha2_128f } = await import(path.join(process.env.NODE_PATH, "@noble/post-quantum/slh-dsa.js"));

const [modulePath, tokenLabel, userPIN] = process.argv.slice(2);

// The PKCS#11 3.2 values (../shared/pkcs11-3.2/FACTS.md).
const CKA_PARAMETER_SET = 0x61d;
const CKK_ML_DSA = 0x4a, CKK_SLH_DSA = 0x4b;
const CKM_ML_DSA_KEY_PAIR_GEN = 0x1c, CKM_ML_DSA = 0x1d;
const CKM_SLH_DSA_KEY_PAIR_GEN = 0x2d, CKM_SLH_DSA = 0x2e;
const CKP_ML_DSA_65 = 2, CKP_SLH_DSA_SHA2_128F = 3;

function report(name, ok, err) {
  process.stdout.write(JSON.stringify({ case: name, ok, err: err || "" }) + "\n");
}

function ulong(v) {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(v));
  return b;
}

const p = new pkcs11js.PKCS11();
p.load(modulePath);
p.C_Initialize();
try {
  const slot = p.C_GetSlotList(true).find((s) => p.C_GetTokenInfo(s).label.trim() === tokenLabel);
  const session = p.C_OpenSession(slot, pkcs11js.CKF_RW_SESSION | pkcs11js.CKF_SERIAL_SESSION);
  p.C_Login(session, pkcs11js.CKU_USER, userPIN);
  const algs = [
    { name: "ML-DSA-65", noble: ml_dsa65, gen: CKM_ML_DSA_KEY_PAIR_GEN, mech: CKM_ML_DSA, ckk: CKK_ML_DSA, set: CKP_ML_DSA_65 },
    { name: "SLH-DSA-SHA2-128f", noble: slh_dsa_sha2_128f, gen: CKM_SLH_DSA_KEY_PAIR_GEN, mech: CKM_SLH_DSA, ckk: CKK_SLH_DSA, set: CKP_SLH_DSA_SHA2_128F },
  ];
  const msg = Buffer.from("signed on the token, checked by @noble/post-quantum");
  for (const a of algs) {
    try {
      const keys = p.C_GenerateKeyPair(session, { mechanism: a.gen },
        [{ type: CKA_PARAMETER_SET, value: ulong(a.set) }, { type: pkcs11js.CKA_VERIFY, value: true }],
        [{ type: pkcs11js.CKA_SIGN, value: true }]);
      const pub = p.C_GetAttributeValue(session, keys.publicKey, [{ type: pkcs11js.CKA_VALUE }])[0].value;
      p.C_SignInit(session, { mechanism: a.mech }, keys.privateKey);
      const sig = p.C_Sign(session, msg, Buffer.alloc(64 << 10));
      if (!a.noble.verify(sig, msg, pub)) throw new Error("noble does not verify the module's signature");
      const bad = Buffer.from(sig);
      bad[10] ^= 1;
      if (a.noble.verify(bad, msg, pub)) throw new Error("noble verifies a changed signature");
      report(`${a.name}: noble verifies the module's signature`, true);
    } catch (e) {
      report(`${a.name}: noble verifies the module's signature`, false, e.message);
    }
    try {
      const { secretKey, publicKey } = a.noble.keygen();
      const sig = a.noble.sign(msg, secretKey);
      const h = p.C_CreateObject(session, [
        { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PUBLIC_KEY }, { type: pkcs11js.CKA_KEY_TYPE, value: a.ckk },
        { type: CKA_PARAMETER_SET, value: ulong(a.set) }, { type: pkcs11js.CKA_VALUE, value: Buffer.from(publicKey) },
        { type: pkcs11js.CKA_VERIFY, value: true },
      ]);
      p.C_VerifyInit(session, { mechanism: a.mech }, h);
      if (!p.C_Verify(session, msg, Buffer.from(sig))) throw new Error("C_Verify refuses noble's signature");
      const bad = Buffer.from(sig);
      bad[10] ^= 1;
      p.C_VerifyInit(session, { mechanism: a.mech }, h);
      let refused = false;
      try {
        refused = !p.C_Verify(session, msg, bad);
      } catch (e) {
        refused = String(e.message).startsWith("CKR_SIGNATURE_INVALID");
        if (!refused) throw e;
      }
      if (!refused) throw new Error("C_Verify accepts a changed signature");
      report(`${a.name}: the module verifies noble's signature`, true);
    } catch (e) {
      report(`${a.name}: the module verifies noble's signature`, false, e.message);
    }
  }
  p.C_Logout(session);
  p.C_CloseSession(session);
} finally {
  p.C_Finalize();
}
