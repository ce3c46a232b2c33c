// The Node client suite: what graphene-pk11's and pkcs11js's own tests do
// (module info, slots, sessions, login, key generation, ciphers, signatures,
// digests, object search, attributes, wrapping, derivation, random, error
// codes), through both libraries, against one PKCS#11 module.
//
// Usage: node suite.js MODULE TOKEN_LABEL USER_PIN
// NODE_PATH names the node_modules directory holding pkcs11js and
// graphene-pk11. Prints one JSON line per case: {"case","ok","err"}; exits 0
// when the cases ran (pass or fail), 2 when the module cannot even load.
"use strict";

const crypto = require("crypto");
const pkcs11js = require("pkcs11js");
const graphene = require("graphene-pk11");

const [modulePath, tokenLabel, userPIN] = process.argv.slice(2);
if (!modulePath || !tokenLabel || !userPIN) {
  console.error("usage: node suite.js MODULE TOKEN_LABEL USER_PIN");
  process.exit(2);
}

function report(name, ok, err) {
  process.stdout.write(JSON.stringify({ case: name, ok, err: err || "" }) + "\n");
}

function run(name, fn) {
  try {
    fn();
    report(name, true);
  } catch (e) {
    report(name, false, (e && e.message ? e.message : String(e)).split("\n")[0]);
  }
}

function assert(cond, msg) {
  if (!cond) throw new Error("assertion failed: " + msg);
}

function assertEq(a, b, msg) {
  if (!Buffer.from(a).equals(Buffer.from(b))) throw new Error("assertion failed: " + msg);
}

// expectCKR runs fn and checks it fails with the named CKR_ code.
function expectCKR(fn, name) {
  const want = pkcs11js[name];
  try {
    fn();
  } catch (e) {
    if (e.code === want || String(e.message).startsWith(name)) return;
    throw new Error(`want ${name}, got ${e.message}`);
  }
  throw new Error(`want ${name}, got success`);
}

const b64url = (b) => Buffer.from(b).toString("base64url");

// ecPoint unwraps CKA_EC_POINT: a DER OCTET STRING holding 04||X||Y (or the
// raw point, as some modules return).
function ecPoint(v) {
  if (v[0] === 0x04 && v.length === 65) return v;
  assert(v[0] === 0x04 && v[1] === 65, "EC_POINT is an OCTET STRING of 65 bytes");
  return v.subarray(2);
}

function ecPublicKeyFromPoint(point) {
  return crypto.createPublicKey({
    format: "jwk",
    key: { kty: "EC", crv: "P-256", x: b64url(point.subarray(1, 33)), y: b64url(point.subarray(33, 65)) },
  });
}

const P256 = Buffer.from("06082a8648ce3d030107", "hex");
const data = Buffer.from("The quick brown fox jumps over the lazy dog, from Node.");

// ---------------------------------------------------------------- pkcs11js
function pkcs11jsCases() {
  const p = new pkcs11js.PKCS11();
  p.load(modulePath);
  p.C_Initialize();
  let session;
  try {
    run("pkcs11js: C_GetInfo", () => {
      const info = p.C_GetInfo();
      assert(info.cryptokiVersion.major >= 2, "cryptoki version");
      assert(typeof info.manufacturerID === "string" && info.manufacturerID.trim() !== "", "manufacturerID");
    });
    let slot;
    run("pkcs11js: slots and token info", () => {
      const slots = p.C_GetSlotList(true);
      assert(slots.length >= 1, "one slot with a token");
      slot = slots.find((s) => p.C_GetTokenInfo(s).label.trim() === tokenLabel);
      assert(slot, "token labelled " + tokenLabel);
      p.C_GetSlotInfo(slot);
      const mechs = p.C_GetMechanismList(slot);
      assert(mechs.includes(pkcs11js.CKM_AES_CBC_PAD), "CKM_AES_CBC_PAD listed");
      const mi = p.C_GetMechanismInfo(slot, pkcs11js.CKM_AES_KEY_GEN);
      assert(mi.maxKeySize >= 32, "AES key sizes");
    });
    if (!slot) return;
    run("pkcs11js: session and login", () => {
      session = p.C_OpenSession(slot, pkcs11js.CKF_RW_SESSION | pkcs11js.CKF_SERIAL_SESSION);
      p.C_Login(session, pkcs11js.CKU_USER, userPIN);
      const si = p.C_GetSessionInfo(session);
      assert(si.state === 3, "state CKS_RW_USER_FUNCTIONS (3), got " + si.state);
    });
    if (!session) return;

    let aes;
    run("pkcs11js: AES key generate", () => {
      aes = p.C_GenerateKey(session, { mechanism: pkcs11js.CKM_AES_KEY_GEN }, [
        { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_SECRET_KEY },
        { type: pkcs11js.CKA_KEY_TYPE, value: pkcs11js.CKK_AES },
        { type: pkcs11js.CKA_TOKEN, value: false },
        { type: pkcs11js.CKA_LABEL, value: "node aes" },
        { type: pkcs11js.CKA_VALUE_LEN, value: 32 },
        { type: pkcs11js.CKA_ENCRYPT, value: true },
        { type: pkcs11js.CKA_DECRYPT, value: true },
        { type: pkcs11js.CKA_WRAP, value: true },
        { type: pkcs11js.CKA_UNWRAP, value: true },
      ]);
    });
    run("pkcs11js: AES-GCM encrypt/decrypt", () => {
      const mech = {
        mechanism: pkcs11js.CKM_AES_GCM,
        parameter: { type: pkcs11js.CK_PARAMS_AES_GCM, iv: crypto.randomBytes(12), aad: Buffer.from("aad"), ivBits: 96, tagBits: 128 },
      };
      p.C_EncryptInit(session, mech, aes);
      const ct = p.C_Encrypt(session, data, Buffer.alloc(data.length + 16));
      assert(ct.length === data.length + 16, "GCM ciphertext length");
      p.C_DecryptInit(session, mech, aes);
      const pt = p.C_Decrypt(session, ct, Buffer.alloc(ct.length));
      assertEq(pt, data, "GCM round trip");
      // A flipped tag bit is refused.
      ct[ct.length - 1] ^= 1;
      p.C_DecryptInit(session, mech, aes);
      expectCKR(() => p.C_Decrypt(session, ct, Buffer.alloc(ct.length)), "CKR_ENCRYPTED_DATA_INVALID");
    });
    run("pkcs11js: AES-CBC multi-part", () => {
      const mech = { mechanism: pkcs11js.CKM_AES_CBC_PAD, parameter: crypto.randomBytes(16) };
      p.C_EncryptInit(session, mech, aes);
      const parts = [p.C_EncryptUpdate(session, data.subarray(0, 20), Buffer.alloc(64))];
      parts.push(p.C_EncryptUpdate(session, data.subarray(20), Buffer.alloc(64)));
      parts.push(p.C_EncryptFinal(session, Buffer.alloc(32)));
      const ct = Buffer.concat(parts);
      p.C_DecryptInit(session, mech, aes);
      const pt = Buffer.concat([p.C_DecryptUpdate(session, ct, Buffer.alloc(ct.length)), p.C_DecryptFinal(session, Buffer.alloc(32))]);
      assertEq(pt, data, "CBC multi-part round trip");
    });
    run("pkcs11js: AES key import, ECB/CBC/CTR/GCM checked by Node", () => {
      const value = crypto.randomBytes(32);
      const k = p.C_CreateObject(session, [
        { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_SECRET_KEY },
        { type: pkcs11js.CKA_KEY_TYPE, value: pkcs11js.CKK_AES },
        { type: pkcs11js.CKA_TOKEN, value: false },
        { type: pkcs11js.CKA_VALUE, value },
        { type: pkcs11js.CKA_ENCRYPT, value: true },
        { type: pkcs11js.CKA_DECRYPT, value: true },
      ]);
      const block = crypto.randomBytes(48);
      const nodeEnc = (alg, iv, pad) => {
        const c = crypto.createCipheriv(alg, value, iv);
        c.setAutoPadding(pad);
        return Buffer.concat([c.update(block), c.final()]);
      };
      const enc = (mech, outLen) => {
        p.C_EncryptInit(session, mech, k);
        return p.C_Encrypt(session, block, Buffer.alloc(outLen));
      };
      assertEq(enc({ mechanism: pkcs11js.CKM_AES_ECB }, 48), nodeEnc("aes-256-ecb", null, false), "ECB");
      const iv = crypto.randomBytes(16);
      assertEq(enc({ mechanism: pkcs11js.CKM_AES_CBC_PAD, parameter: iv }, 64), nodeEnc("aes-256-cbc", iv, true), "CBC-PAD");
      const ctr = Buffer.alloc(24);
      ctr.writeBigUInt64LE(128n, 0); // CK_AES_CTR_PARAMS: ulCounterBits, cb[16]
      iv.copy(ctr, 8);
      assertEq(enc({ mechanism: pkcs11js.CKM_AES_CTR, parameter: ctr }, 48), nodeEnc("aes-256-ctr", iv, false), "CTR");
      const gcmIV = crypto.randomBytes(12);
      const ct = enc({ mechanism: pkcs11js.CKM_AES_GCM, parameter: { type: pkcs11js.CK_PARAMS_GCM, iv: gcmIV, ivBits: 96, aad: Buffer.from("aad"), tagBits: 128 } }, 64);
      const d = crypto.createDecipheriv("aes-256-gcm", value, gcmIV);
      d.setAAD(Buffer.from("aad"));
      d.setAuthTag(ct.subarray(48));
      assertEq(Buffer.concat([d.update(ct.subarray(0, 48)), d.final()]), block, "GCM (3.0 CK_GCM_PARAMS) decrypted by Node");
      p.C_DestroyObject(session, k);
    });
    run("pkcs11js: digest SHA-256 (one-shot and multi-part)", () => {
      const want = crypto.createHash("sha256").update(data).digest();
      p.C_DigestInit(session, { mechanism: pkcs11js.CKM_SHA256 });
      assertEq(p.C_Digest(session, data, Buffer.alloc(32)), want, "one-shot digest");
      p.C_DigestInit(session, { mechanism: pkcs11js.CKM_SHA256 });
      p.C_DigestUpdate(session, data.subarray(0, 7));
      p.C_DigestUpdate(session, data.subarray(7));
      assertEq(p.C_DigestFinal(session, Buffer.alloc(32)), want, "multi-part digest");
    });
    run("pkcs11js: random", () => {
      p.C_SeedRandom(session, Buffer.from("seed"));
      const a = p.C_GenerateRandom(session, Buffer.alloc(32));
      const b = p.C_GenerateRandom(session, Buffer.alloc(32));
      assert(a.length === 32 && !a.equals(b), "two random blocks differ");
    });
    run("pkcs11js: find objects", () => {
      p.C_FindObjectsInit(session, [{ type: pkcs11js.CKA_LABEL, value: "node aes" }]);
      const found = p.C_FindObjects(session, 10);
      p.C_FindObjectsFinal(session);
      assert(found.length === 1 && found[0].equals(aes), "the AES key, once");
    });
    run("pkcs11js: get/set attributes", () => {
      p.C_SetAttributeValue(session, aes, [{ type: pkcs11js.CKA_LABEL, value: "node aes 2" }]);
      const attrs = p.C_GetAttributeValue(session, aes, [{ type: pkcs11js.CKA_LABEL }, { type: pkcs11js.CKA_VALUE_LEN }]);
      assert(attrs[0].value.toString() === "node aes 2", "label changed");
      assert(attrs[1].value.length === 8 && attrs[1].value.readBigUInt64LE() === 32n, "CKA_VALUE_LEN 32 (a CK_ULONG)");
    });
    run("pkcs11js: error codes", () => {
      expectCKR(() => p.C_GetAttributeValue(session, Buffer.from([0xee, 0xee, 0xee, 0, 0, 0, 0, 0]), [{ type: pkcs11js.CKA_LABEL }]), "CKR_OBJECT_HANDLE_INVALID");
      expectCKR(() => p.C_GetAttributeValue(session, aes, [{ type: pkcs11js.CKA_VALUE }]), "CKR_ATTRIBUTE_SENSITIVE");
      expectCKR(() => p.C_DigestInit(session, { mechanism: 0x7fff0000 }), "CKR_MECHANISM_INVALID");
      expectCKR(() => p.C_Login(session, pkcs11js.CKU_USER, userPIN), "CKR_USER_ALREADY_LOGGED_IN");
      expectCKR(() => p.C_GetSessionInfo(Buffer.from([0xee, 0xee, 0, 0, 0, 0, 0, 0])), "CKR_SESSION_HANDLE_INVALID");
    });
    // What pkcs11js's own test.js does beyond the cases above.
    run("pkcs11js: AES key without CKA_KEY_TYPE (the mechanism's)", () => {
      const k = p.C_GenerateKey(session, { mechanism: pkcs11js.CKM_AES_KEY_GEN }, [
        { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_SECRET_KEY },
        { type: pkcs11js.CKA_TOKEN, value: false },
        { type: pkcs11js.CKA_LABEL, value: "My AES Key" },
        { type: pkcs11js.CKA_VALUE_LEN, value: 256 / 8 },
        { type: pkcs11js.CKA_ENCRYPT, value: true },
        { type: pkcs11js.CKA_DECRYPT, value: true },
      ]);
      const kt = p.C_GetAttributeValue(session, k, [{ type: pkcs11js.CKA_KEY_TYPE }])[0].value;
      assert(kt.readBigUInt64LE() === BigInt(pkcs11js.CKK_AES), "CKA_KEY_TYPE is CKK_AES");
      const iv = Buffer.from([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);
      p.C_EncryptInit(session, { mechanism: pkcs11js.CKM_AES_CBC, parameter: iv }, k);
      let enc = p.C_EncryptUpdate(session, Buffer.from("1234567812345678"), Buffer.alloc(200));
      enc = Buffer.concat([enc, p.C_EncryptUpdate(session, Buffer.from("1234567812345678"), Buffer.alloc(200))]);
      enc = Buffer.concat([enc, p.C_EncryptFinal(session, Buffer.alloc(16))]);
      assert(enc.length === 32, "two blocks");
      p.C_DecryptInit(session, { mechanism: pkcs11js.CKM_AES_CBC, parameter: iv }, k);
      let dec = p.C_DecryptUpdate(session, enc, Buffer.alloc(200));
      dec = Buffer.concat([dec, p.C_DecryptFinal(session, Buffer.alloc(16))]);
      assert(dec.toString() === "12345678123456781234567812345678", "round trip");
    });
    run("pkcs11js: RSA-1024 key pair, multi-part SHA256_RSA_PKCS checked by Node", () => {
      const keys = p.C_GenerateKeyPair(session, { mechanism: pkcs11js.CKM_RSA_PKCS_KEY_PAIR_GEN }, [
        { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PUBLIC_KEY },
        { type: pkcs11js.CKA_TOKEN, value: false },
        { type: pkcs11js.CKA_LABEL, value: "My RSA Public Key" },
        { type: pkcs11js.CKA_PUBLIC_EXPONENT, value: Buffer.from([1, 0, 1]) },
        { type: pkcs11js.CKA_MODULUS_BITS, value: 1024 },
        { type: pkcs11js.CKA_VERIFY, value: true },
      ], [
        { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY },
        { type: pkcs11js.CKA_TOKEN, value: false },
        { type: pkcs11js.CKA_LABEL, value: "My RSA Private Key" },
        { type: pkcs11js.CKA_SIGN, value: true },
      ]);
      p.C_SignInit(session, { mechanism: pkcs11js.CKM_SHA256_RSA_PKCS }, keys.privateKey);
      p.C_SignUpdate(session, Buffer.from("Hello my test"));
      p.C_SignUpdate(session, Buffer.from("!!!"));
      const sig = p.C_SignFinal(session, Buffer.alloc(256 + 10));
      assert(sig.length === 128, "a 1024-bit signature");
      const [n, e] = p.C_GetAttributeValue(session, keys.publicKey, [{ type: pkcs11js.CKA_MODULUS }, { type: pkcs11js.CKA_PUBLIC_EXPONENT }]);
      const pub = crypto.createPublicKey({ format: "jwk", key: { kty: "RSA", n: b64url(n.value), e: b64url(e.value) } });
      assert(crypto.verify("sha256", Buffer.from("Hello my test!!!"), pub, sig), "PKCS#1 v1.5 verifies in Node");
      p.C_VerifyInit(session, { mechanism: pkcs11js.CKM_SHA256_RSA_PKCS }, keys.publicKey);
      p.C_VerifyUpdate(session, Buffer.from("Hello my test"));
      p.C_VerifyUpdate(session, Buffer.from("!!!"));
      assert(p.C_VerifyFinal(session, sig) === true, "and in the module");
      p.C_VerifyInit(session, { mechanism: pkcs11js.CKM_SHA256_RSA_PKCS }, keys.publicKey);
      p.C_VerifyUpdate(session, Buffer.from("Hello my test"));
      p.C_VerifyUpdate(session, Buffer.from("!!!<Error here"));
      let refused;
      try { refused = p.C_VerifyFinal(session, sig) === false; } catch (err) { refused = /CKR_SIGNATURE_INVALID/.test(err.message); }
      assert(refused, "other data: false or CKR_SIGNATURE_INVALID");
    });
    run("pkcs11js: two EC key pairs agree by ECDH1_DERIVE on their own DER points", () => {
      const gen = () => p.C_GenerateKeyPair(session, { mechanism: pkcs11js.CKM_EC_KEY_PAIR_GEN }, [
        { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PUBLIC_KEY },
        { type: pkcs11js.CKA_TOKEN, value: false },
        { type: pkcs11js.CKA_EC_PARAMS, value: Buffer.from("06082A8648CE3D030107", "hex") },
      ], [
        { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY },
        { type: pkcs11js.CKA_TOKEN, value: false },
        { type: pkcs11js.CKA_DERIVE, value: true },
      ]);
      const a = gen(), b = gen();
      const point = (k) => p.C_GetAttributeValue(session, k.publicKey, [{ type: pkcs11js.CKA_EC_POINT }])[0].value;
      const derive = (priv, peerPoint) => {
        const h = p.C_DeriveKey(session, {
          mechanism: pkcs11js.CKM_ECDH1_DERIVE,
          parameter: { type: pkcs11js.CK_PARAMS_EC_DH, kdf: pkcs11js.CKD_NULL, publicData: peerPoint },
        }, priv, [
          { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_SECRET_KEY },
          { type: pkcs11js.CKA_TOKEN, value: false },
          { type: pkcs11js.CKA_KEY_TYPE, value: pkcs11js.CKK_AES },
          { type: pkcs11js.CKA_LABEL, value: "Derived key" },
          { type: pkcs11js.CKA_ENCRYPT, value: true },
          { type: pkcs11js.CKA_VALUE_LEN, value: 256 / 8 },
          { type: pkcs11js.CKA_SENSITIVE, value: false },
          { type: pkcs11js.CKA_EXTRACTABLE, value: true },
        ]);
        return p.C_GetAttributeValue(session, h, [{ type: pkcs11js.CKA_VALUE }])[0].value;
      };
      const ab = derive(a.privateKey, point(b)), ba = derive(b.privateKey, point(a));
      assert(ab.length === 32, "a 32-byte AES key");
      assertEq(ab, ba, "both ends derive the same key");
    });
    run("pkcs11js: C_CopyObject, C_GetObjectSize, C_SeedRandom", () => {
      const obj = p.C_CreateObject(session, [
        { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_DATA },
        { type: pkcs11js.CKA_TOKEN, value: false },
        { type: pkcs11js.CKA_PRIVATE, value: false },
        { type: pkcs11js.CKA_LABEL, value: "My custom Object" },
      ]);
      const copy = p.C_CopyObject(session, obj, [{ type: pkcs11js.CKA_LABEL, value: "My copied Object" }]);
      assert(p.C_GetAttributeValue(session, copy, [{ type: pkcs11js.CKA_LABEL }])[0].value.toString() === "My copied Object", "copy relabelled");
      assert(p.C_GetObjectSize(session, obj) > 0, "an object size");
      p.C_SeedRandom(session, Buffer.alloc(20, 7));
      p.C_DestroyObject(session, copy);
      p.C_DestroyObject(session, obj);
    });
    run("pkcs11js: destroy object", () => {
      p.C_DestroyObject(session, aes);
      expectCKR(() => p.C_GetAttributeValue(session, aes, [{ type: pkcs11js.CKA_LABEL }]), "CKR_OBJECT_HANDLE_INVALID");
    });
    run("pkcs11js: wrong PIN", () => {
      const s2 = p.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION);
      p.C_Logout(session);
      try {
        expectCKR(() => p.C_Login(s2, pkcs11js.CKU_USER, userPIN + "0"), "CKR_PIN_INCORRECT");
      } finally {
        p.C_CloseSession(s2);
        p.C_Login(session, pkcs11js.CKU_USER, userPIN);
      }
    });
  } finally {
    if (session) {
      try { p.C_Logout(session); } catch (e) { /* already logged out */ }
      p.C_CloseSession(session);
    }
    p.C_Finalize();
  }
}

// pkcs11js's asynchronous calls (a callback as the last argument): the
// module is called from a libuv worker thread.
async function pkcs11jsAsyncCases() {
  const p = new pkcs11js.PKCS11();
  p.load(modulePath);
  p.C_Initialize();
  const slot = p.C_GetSlotList(true).find((s) => p.C_GetTokenInfo(s).label.trim() === tokenLabel);
  const session = p.C_OpenSession(slot, pkcs11js.CKF_RW_SESSION | pkcs11js.CKF_SERIAL_SESSION);
  const call = (fn, ...args) => new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("no callback within 20 s")), 20000);
    fn.call(p, ...args, (err, v) => { clearTimeout(timer); if (err) reject(err); else resolve(v); });
  });
  const name = "pkcs11js: C_GenerateKey and C_GenerateKeyPair with callbacks (worker thread)";
  try {
    p.C_Login(session, pkcs11js.CKU_USER, userPIN);
    const key = await call(p.C_GenerateKey, session, { mechanism: pkcs11js.CKM_AES_KEY_GEN }, [
      { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_SECRET_KEY },
      { type: pkcs11js.CKA_TOKEN, value: false },
      { type: pkcs11js.CKA_VALUE_LEN, value: 256 / 8 },
      { type: pkcs11js.CKA_ENCRYPT, value: true },
    ]);
    assert(Buffer.isBuffer(key), "a key handle");
    const keys = await call(p.C_GenerateKeyPair, session, { mechanism: pkcs11js.CKM_EC_KEY_PAIR_GEN }, [
      { type: pkcs11js.CKA_TOKEN, value: false },
      { type: pkcs11js.CKA_EC_PARAMS, value: P256 },
      { type: pkcs11js.CKA_VERIFY, value: true },
    ], [
      { type: pkcs11js.CKA_TOKEN, value: false },
      { type: pkcs11js.CKA_SIGN, value: true },
    ]);
    assert(Buffer.isBuffer(keys.privateKey) && Buffer.isBuffer(keys.publicKey), "two key handles");
    report(name, true);
  } catch (e) {
    report(name, false, (e && e.message ? e.message : String(e)).split("\n")[0]);
  } finally {
    try { p.C_Logout(session); } catch (e) { /* not logged in */ }
    p.C_CloseSession(session);
    p.C_Finalize();
  }
}

// ---------------------------------------------------------------- graphene
function grapheneCases() {
  const mod = graphene.Module.load(modulePath, "module");
  mod.initialize();
  let session;
  try {
    run("graphene: module info", () => {
      assert(mod.cryptokiVersion.major >= 2, "cryptoki version");
      assert(mod.libraryDescription.trim() !== "", "library description");
    });
    let slot;
    run("graphene: slots and token", () => {
      const slots = mod.getSlots(true);
      for (let i = 0; i < slots.length; i++) {
        if (slots.items(i).getToken().label.trim() === tokenLabel) slot = slots.items(i);
      }
      assert(slot, "token labelled " + tokenLabel);
      assert(slot.getToken().flags & graphene.TokenFlag.TOKEN_INITIALIZED, "token initialised");
      const mechs = slot.getMechanisms();
      assert(mechs.length > 10, "mechanisms listed");
    });
    if (!slot) return;
    run("graphene: session and login", () => {
      session = slot.open(graphene.SessionFlag.SERIAL_SESSION | graphene.SessionFlag.RW_SESSION);
      session.login(userPIN, graphene.UserType.USER);
    });
    if (!session) return;

    let aes;
    run("graphene: AES key generate", () => {
      aes = session.generateKey(graphene.KeyGenMechanism.AES, {
        class: graphene.ObjectClass.SECRET_KEY, keyType: graphene.KeyType.AES, token: false,
        label: "graphene aes", valueLen: 16, encrypt: true, decrypt: true, wrap: true, unwrap: true, extractable: true,
      });
      assert(aes.getAttribute({ valueLen: null }).valueLen === 16, "valueLen 16");
    });
    run("graphene: AES-CBC encrypt/decrypt", () => {
      const alg = { name: "AES_CBC_PAD", params: crypto.randomBytes(16) };
      const c = session.createCipher(alg, aes);
      const ct = Buffer.concat([c.update(data), c.final()]);
      const d = session.createDecipher(alg, aes);
      assertEq(Buffer.concat([d.update(ct), d.final()]), data, "CBC round trip");
    });
    run("graphene: AES-GCM encrypt/decrypt", () => {
      const alg = { name: "AES_GCM", params: new graphene.AesGcmParams(crypto.randomBytes(12), Buffer.from("aad"), 128) };
      const ct = session.createCipher(alg, aes).once(data, Buffer.alloc(data.length + 16));
      const pt = session.createDecipher(alg, aes).once(ct, Buffer.alloc(ct.length));
      assertEq(pt, data, "GCM round trip");
    });

    let hmac;
    run("graphene: generic secret generate", () => {
      hmac = session.generateKey(graphene.KeyGenMechanism.GENERIC_SECRET, {
        class: graphene.ObjectClass.SECRET_KEY, keyType: graphene.KeyType.GENERIC_SECRET, token: false,
        label: "graphene hmac", valueLen: 32, sign: true, verify: true, extractable: true, sensitive: false,
      });
    });
    run("graphene: HMAC-SHA256 sign/verify", () => {
      const mac = session.createSign("SHA256_HMAC", hmac).once(data);
      const want = crypto.createHmac("sha256", hmac.getAttribute({ value: null }).value).update(data).digest();
      assertEq(mac, want, "HMAC matches Node's");
      assert(session.createVerify("SHA256_HMAC", hmac).once(data, mac), "HMAC verifies");
      const bad = Buffer.from(mac); bad[0] ^= 1;
      let ok;
      try { ok = session.createVerify("SHA256_HMAC", hmac).once(data, bad); } catch (e) { ok = false; }
      assert(!ok, "a wrong HMAC is refused");
    });
    run("graphene: wrap/unwrap AES-KW", () => {
      const wrapped = session.wrapKey("AES_KEY_WRAP", aes, hmac);
      assert(wrapped.length === 40, "RFC 3394 output of 40 bytes");
      const back = session.unwrapKey("AES_KEY_WRAP", aes, wrapped, {
        class: graphene.ObjectClass.SECRET_KEY, keyType: graphene.KeyType.GENERIC_SECRET, token: false,
        sign: true, verify: true, extractable: true, sensitive: false,
      });
      assertEq(back.getAttribute({ value: null }).value, hmac.getAttribute({ value: null }).value, "unwrapped value");
    });

    let rsa;
    run("graphene: RSA-2048 key pair", () => {
      rsa = session.generateKeyPair(graphene.KeyGenMechanism.RSA,
        { keyType: graphene.KeyType.RSA, token: false, modulusBits: 2048, publicExponent: Buffer.from([1, 0, 1]), verify: true, encrypt: true, wrap: true },
        { keyType: graphene.KeyType.RSA, token: false, private: true, sensitive: true, sign: true, decrypt: true, unwrap: true });
    });
    let rsaPub;
    run("graphene: RSA PKCS#1 v1.5 and PSS signatures checked by Node", () => {
      const a = rsa.publicKey.getAttribute({ modulus: null, publicExponent: null });
      rsaPub = crypto.createPublicKey({ format: "jwk", key: { kty: "RSA", n: b64url(a.modulus), e: b64url(a.publicExponent) } });
      const sig = session.createSign("SHA256_RSA_PKCS", rsa.privateKey).once(data);
      assert(crypto.verify("sha256", data, rsaPub, sig), "PKCS#1 v1.5 signature verifies in Node");
      assert(session.createVerify("SHA256_RSA_PKCS", rsa.publicKey).once(data, sig), "and in the module");
      const pss = { name: "SHA256_RSA_PKCS_PSS", params: new graphene.RsaPssParams(graphene.MechanismEnum.SHA256, graphene.RsaMgf.MGF1_SHA256, 32) };
      const psig = session.createSign(pss, rsa.privateKey).once(data);
      assert(crypto.verify("sha256", data, { key: rsaPub, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }, psig), "PSS signature verifies in Node");
    });
    run("graphene: RSA-OAEP encrypted by Node, decrypted by the module", () => {
      const ct = crypto.publicEncrypt({ key: rsaPub, padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: "sha1" }, data);
      const alg = { name: "RSA_PKCS_OAEP", params: new graphene.RsaOaepParams() };
      assertEq(session.createDecipher(alg, rsa.privateKey).once(ct, Buffer.alloc(256)), data, "OAEP plaintext");
    });
    // graphene's own test/rsa.ts: e = 3, OAEP with a label, RSA_PKCS key
    // wrapping, PSS with every SHA-2 hash.
    run("graphene: RSA e=3 key pair: OAEP with a label from Node, PKCS#1 wrap, PSS SHA-224..512 checked by Node", () => {
      const kp = session.generateKeyPair(graphene.KeyGenMechanism.RSA,
        { keyType: graphene.KeyType.RSA, modulusBits: 2048, publicExponent: Buffer.from([3]), token: false, verify: true, encrypt: true, wrap: true },
        { keyType: graphene.KeyType.RSA, token: false, sign: true, decrypt: true, unwrap: true });
      const a = kp.publicKey.getAttribute({ modulus: null, publicExponent: null });
      assertEq(a.publicExponent, Buffer.from([3]), "e = 3");
      const pub = crypto.createPublicKey({ format: "jwk", key: { kty: "RSA", n: b64url(a.modulus), e: b64url(a.publicExponent) } });
      const label = Buffer.from([1, 2, 3, 4, 5, 6, 7, 8, 9, 0]);
      const ct = crypto.publicEncrypt({ key: pub, padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: "sha1", oaepLabel: label }, data);
      const oaep = { name: "RSA_PKCS_OAEP", params: new graphene.RsaOaepParams(graphene.MechanismEnum.SHA1, graphene.RsaMgf.MGF1_SHA1, label) };
      assertEq(session.createDecipher(oaep, kp.privateKey).once(ct, Buffer.alloc(256)), data, "OAEP with a label");
      const value = crypto.randomBytes(32);
      const inner = session.create({ class: graphene.ObjectClass.SECRET_KEY, keyType: graphene.KeyType.AES, token: false, value, extractable: true, encrypt: true });
      const wrapped = session.wrapKey("RSA_PKCS", kp.publicKey, inner);
      assert(wrapped.length === 256, "a 256-byte PKCS#1 v1.5 block");
      const back = session.unwrapKey("RSA_PKCS", kp.privateKey, wrapped, { class: graphene.ObjectClass.SECRET_KEY, keyType: graphene.KeyType.AES,
        token: false, extractable: true, sensitive: false, encrypt: true, decrypt: true });
      assertEq(back.getAttribute({ value: null }).value, value, "the unwrapped key");
      for (const [h, bits, salt] of [["SHA224", "sha224", 28], ["SHA256", "sha256", 32], ["SHA384", "sha384", 48], ["SHA512", "sha512", 64]]) {
        const alg = { name: h + "_RSA_PKCS_PSS", params: new graphene.RsaPssParams(graphene.MechanismEnum[h], graphene.RsaMgf["MGF1_" + h], salt) };
        const sig = session.createSign(alg, kp.privateKey).once(data);
        assert(crypto.verify(bits, data, { key: pub, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: salt }, sig), h + " PSS verifies in Node");
        let ok;
        try { ok = session.createVerify(alg, kp.publicKey).once(Buffer.concat([data, Buffer.from("!")]), sig); } catch (e) { ok = false; }
        assert(!ok, h + ": other data refused");
      }
    });
    run("graphene: wrap/unwrap RSA-OAEP", () => {
      const alg = { name: "RSA_PKCS_OAEP", params: new graphene.RsaOaepParams() };
      const wrapped = session.wrapKey(alg, rsa.publicKey, aes);
      const back = session.unwrapKey(alg, rsa.privateKey, wrapped, {
        class: graphene.ObjectClass.SECRET_KEY, keyType: graphene.KeyType.AES, token: false, encrypt: true, decrypt: true,
      });
      const iv = crypto.randomBytes(16);
      const c = session.createCipher({ name: "AES_CBC_PAD", params: iv }, aes);
      const ct = Buffer.concat([c.update(data), c.final()]);
      const d = session.createDecipher({ name: "AES_CBC_PAD", params: iv }, back);
      assertEq(Buffer.concat([d.update(ct), d.final()]), data, "the unwrapped key decrypts");
    });

    let ec;
    run("graphene: EC P-256 key pair", () => {
      ec = session.generateKeyPair(graphene.KeyGenMechanism.EC,
        { keyType: graphene.KeyType.EC, token: false, paramsEC: P256, verify: true, derive: true },
        { keyType: graphene.KeyType.EC, token: false, private: true, sign: true, derive: true });
    });
    run("graphene: ECDSA (hash by Node) checked by Node", () => {
      const pub = ecPublicKeyFromPoint(ecPoint(ec.publicKey.getAttribute({ pointEC: null }).pointEC));
      const hash = crypto.createHash("sha256").update(data).digest();
      const sig = session.createSign("ECDSA", ec.privateKey).once(hash);
      assert(sig.length === 64, "r||s of 64 bytes");
      assert(crypto.verify("sha256", data, { key: pub, dsaEncoding: "ieee-p1363" }, sig), "ECDSA verifies in Node");
      assert(session.createVerify("ECDSA", ec.publicKey).once(hash, sig), "and verifies in the module");
    });
    run("graphene: ECDSA_SHA256 checked by Node", () => {
      const pub = ecPublicKeyFromPoint(ecPoint(ec.publicKey.getAttribute({ pointEC: null }).pointEC));
      const sig = session.createSign("ECDSA_SHA256", ec.privateKey).once(data);
      assert(sig.length === 64, "r||s of 64 bytes");
      assert(crypto.verify("sha256", data, { key: pub, dsaEncoding: "ieee-p1363" }, sig), "ECDSA verifies in Node");
      const nodeSig = crypto.sign("sha256", data, { key: crypto.generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey, dsaEncoding: "ieee-p1363" });
      let ok;
      try { ok = session.createVerify("ECDSA_SHA256", ec.publicKey).once(data, nodeSig); } catch (e) { ok = false; }
      assert(!ok, "another key's signature is refused");
      assert(session.createVerify("ECDSA_SHA256", ec.publicKey).once(data, sig), "and verifies in the module");
    });
    run("graphene: ECDH derive matches Node", () => {
      const peer = crypto.createECDH("prime256v1");
      peer.generateKeys();
      const secret = session.deriveKey(
        { name: "ECDH1_DERIVE", params: new graphene.EcdhParams(graphene.EcKdf.NULL, null, peer.getPublicKey()) },
        ec.privateKey,
        { class: graphene.ObjectClass.SECRET_KEY, keyType: graphene.KeyType.GENERIC_SECRET, token: false, valueLen: 32, extractable: true, sensitive: false });
      const want = peer.computeSecret(ecPoint(ec.publicKey.getAttribute({ pointEC: null }).pointEC));
      assertEq(secret.getAttribute({ value: null }).value, want, "shared secret");
    });
    // What graphene's own test/ec.ts and test/aes.ts do beyond the cases above.
    run("graphene: secp192r1 and secp256k1 key pairs with all usage flags, raw ECDSA", () => {
      for (const params of [graphene.NamedCurve.getByOid("1.2.840.10045.3.1.1").value, Buffer.from("06082A8648CE3D030101", "hex"),
        graphene.NamedCurve.getByName("secp256k1").value]) {
        const keys = session.generateKeyPair(graphene.KeyGenMechanism.EC,
          { keyType: graphene.KeyType.EC, paramsEC: params, token: false, verify: true, encrypt: true, wrap: true, derive: false },
          { keyType: graphene.KeyType.EC, token: false, sign: true, decrypt: true, unwrap: true, derive: false });
        const digest = Buffer.from("1234567890abcdf");
        const sig = session.createSign("ECDSA", keys.privateKey).once(digest);
        assert(session.createVerify("ECDSA", keys.publicKey).once(digest, sig), "verifies");
        let ok;
        try { ok = session.createVerify("ECDSA", keys.publicKey).once(Buffer.from("1234567890abcd0"), sig); } catch (e) { ok = false; }
        assert(!ok, "another digest is refused");
      }
    });
    run("graphene: AES-192 key and AES_CBC_ENCRYPT_DATA derive checked by Node", () => {
      const value = crypto.randomBytes(24);
      const base = session.create({ class: graphene.ObjectClass.SECRET_KEY, keyType: graphene.KeyType.AES, token: false, value,
        encrypt: true, decrypt: true, derive: true });
      const iv = Buffer.from("1234567890abcdef"), input = Buffer.from("12345678901234567890123456789012");
      const derived = session.deriveKey(
        { name: "AES_CBC_ENCRYPT_DATA", params: new graphene.AesCbcEncryptDataParams(iv, input) },
        base,
        { class: graphene.ObjectClass.SECRET_KEY, keyType: graphene.KeyType.AES, private: false, encrypt: true, decrypt: true,
          sensitive: false, extractable: true, valueLen: 32 });
      const c = crypto.createCipheriv("aes-192-cbc", value, iv).setAutoPadding(false);
      assertEq(derived.getAttribute({ value: null }).value, Buffer.concat([c.update(input), c.final()]), "the data encrypted under the base key");
      const gen = session.generateKey(graphene.KeyGenMechanism.AES, { keyType: graphene.KeyType.AES, valueLen: 192 / 8, encrypt: true,
        decrypt: true, sign: true, verify: true, wrap: true, unwrap: true, derive: true, token: false });
      const msg = "1234567890123456", cbcIV = crypto.randomBytes(16);
      const cipher = session.createCipher({ name: "AES_CBC_PAD", params: cbcIV }, gen);
      const enc = Buffer.concat([cipher.update(msg), cipher.final()]);
      const decipher = session.createDecipher({ name: "AES_CBC_PAD", params: cbcIV }, gen, enc.length);
      assert(Buffer.concat([decipher.update(enc), decipher.final()]).toString() === msg, "AES-192 round trip");
    });
    run("graphene: digest", () => {
      const want = crypto.createHash("sha512").update(data).digest();
      assertEq(session.createDigest("SHA512").once(data), want, "SHA-512");
    });
    run("graphene: random", () => {
      assert(session.generateRandom(48).length === 48, "48 bytes");
    });
    run("graphene: token object, find, attributes, destroy", () => {
      const k = session.generateKey(graphene.KeyGenMechanism.AES, {
        class: graphene.ObjectClass.SECRET_KEY, keyType: graphene.KeyType.AES, token: true, private: true,
        label: "graphene token key", id: Buffer.from("0102", "hex"), valueLen: 32, encrypt: true, decrypt: true,
      });
      try {
        const found = session.find({ class: graphene.ObjectClass.SECRET_KEY, label: "graphene token key" });
        assert(found.length === 1, "found once");
        const obj = found.items(0).toType();
        assertEq(obj.id, Buffer.from("0102", "hex"), "CKA_ID");
        obj.label = "renamed";
        assert(obj.getAttribute({ label: null }).label === "renamed", "label set");
        assert(session.find({ label: "graphene token key" }).length === 0, "old label gone");
        assert(obj.getAttribute({ token: null }).token === true, "token object");
        let sensitive;
        try { obj.getAttribute({ value: null }); sensitive = false; } catch (e) { sensitive = /CKR_ATTRIBUTE_SENSITIVE/.test(e.message); }
        assert(sensitive, "CKA_VALUE of a sensitive key is refused with CKR_ATTRIBUTE_SENSITIVE");
      } finally {
        k.destroy();
      }
      assert(session.find({ label: "renamed" }).length === 0, "destroyed");
    });
    run("graphene: data object create and copy", () => {
      const obj = session.create({ class: graphene.ObjectClass.DATA, token: false, label: "graphene data", application: "node", value: Buffer.from("payload") });
      const copy = obj.copy({ label: "graphene data copy" });
      const a = copy.getAttribute({ label: null, application: null, value: null });
      assert(a.label === "graphene data copy" && a.application === "node", "copied attributes");
      assertEq(a.value, Buffer.from("payload"), "copied value");
      assert(session.find({ class: graphene.ObjectClass.DATA, application: "node" }).length === 2, "both found");
      copy.destroy();
      obj.destroy();
    });
    run("graphene: error codes", () => {
      let code;
      try { session.createSign("SHA256_HMAC", aes).once(data); } catch (e) { code = e.code; }
      assert(code === pkcs11js.CKR_KEY_TYPE_INCONSISTENT || code === pkcs11js.CKR_KEY_FUNCTION_NOT_PERMITTED,
        "HMAC with an AES key without CKA_SIGN: CKR_KEY_TYPE_INCONSISTENT or CKR_KEY_FUNCTION_NOT_PERMITTED, got " + code);
    });
  } finally {
    if (session) {
      try { session.logout(); } catch (e) { /* not logged in */ }
      session.close();
    }
    mod.finalize();
  }
}

(async () => {
  try {
    pkcs11jsCases();
    await pkcs11jsAsyncCases();
    grapheneCases();
  } catch (e) {
    console.error("suite: " + (e && e.stack ? e.stack : e));
    process.exit(2);
  }
})();
