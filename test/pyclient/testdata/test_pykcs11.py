"""What a PyKCS11 user does with a token, checked against independent code.

Run by test/pyclient (pyclient_test.go) with Debian's /usr/bin/python3:

    PYKCS11LIB     the PKCS#11 module
    PYKCS11PIN     the user PIN of the token labelled PYKCS11TOKEN
    PYKCS11SOPIN   its SO PIN
    PYKCS11TOKEN   the token label
    PYKCS11RESULTS a file that receives {"test name": "pass"|"fail"|"error"|"skip"}

Every result the token computes is compared with Python's hashlib/hmac or
python3-cryptography (the Debian package), never with the token itself.
"""

import ctypes
import hashlib
import hmac
import json
import os
import struct
import sys
import unittest

import PyKCS11
from PyKCS11 import LowLevel
from PyKCS11.LowLevel import *  # noqa: F401,F403 (the CK* constants)

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.keywrap import aes_key_wrap, aes_key_wrap_with_padding
from cryptography.hazmat.primitives.asymmetric import ed25519
from cryptography.hazmat.primitives.cmac import CMAC
from cryptography.hazmat.primitives.kdf.x963kdf import X963KDF
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from cryptography.hazmat.primitives import padding as sympadding

LIB = os.environ["PYKCS11LIB"]
PIN = os.environ["PYKCS11PIN"]
LABEL = os.environ.get("PYKCS11TOKEN", "t")

# Fixed, made-up key material for known-answer comparisons.
AES_KEY = bytes(range(32))
HMAC_KEY = bytes(range(100, 164))
MSG = b"The quick brown fox jumps over the lazy dog" * 3

P256_OID = bytes.fromhex("06082a8648ce3d030107")
P384_OID = bytes.fromhex("06052b81040022")
K256_OID = bytes.fromhex("06052b8104000a")
ED25519_OID = bytes.fromhex("06032b6570")
P192_OID = bytes.fromhex("06082a8648ce3d030101")
CURVES = {P256_OID: ec.SECP256R1(), P384_OID: ec.SECP384R1(), K256_OID: ec.SECP256K1(), P192_OID: ec.SECP192R1()}

pkcs11 = PyKCS11.PyKCS11Lib()
pkcs11.load(LIB)


def token_slot():
    for s in pkcs11.getSlotList(tokenPresent=True):
        if pkcs11.getTokenInfo(s).label.strip() == LABEL:
            return s
    raise RuntimeError("no token labelled %r" % LABEL)


SLOT = token_slot()


def ecdsa_verify_p192(q, z, r, s):
    """Textbook ECDSA verification on P-192 (public values only), for a
    hash z already reduced to the order's length."""
    p = 2**192 - 2**64 - 1
    n = int("ffffffffffffffffffffffff99def836146bc9b1b4d22831", 16)
    g = ec.derive_private_key(1, ec.SECP192R1()).public_key().public_numbers()

    def add(a, b):
        if a is None:
            return b
        if b is None:
            return a
        if a[0] == b[0] and (a[1] + b[1]) % p == 0:
            return None
        if a == b:
            lam = (3 * a[0] * a[0] - 3) * pow(2 * a[1], -1, p) % p
        else:
            lam = (b[1] - a[1]) * pow(b[0] - a[0], -1, p) % p
        x = (lam * lam - a[0] - b[0]) % p
        return (x, (lam * (a[0] - x) - a[1]) % p)

    def mul(k, pt):
        acc = None
        while k:
            if k & 1:
                acc = add(acc, pt)
            pt, k = add(pt, pt), k >> 1
        return acc

    if not (0 < r < n and 0 < s < n):
        return False
    w = pow(s, -1, n)
    pt = add(mul(z * w % n, (g.x, g.y)), mul(r * w % n, q))
    return pt is not None and pt[0] % n == r


def _der(tag, body):
    n = len(body)
    if n < 0x80:
        return bytes([tag, n]) + body
    ln = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([tag, 0x80 | len(ln)]) + ln + body


def _der_int(v):
    b = v.to_bytes(v.bit_length() // 8 + 1, "big")
    return _der(0x02, b)


def explicit_params_p256():
    """X9.62 ECParameters spelling out P-256 (SEC 2 constants)."""
    p = 2**256 - 2**224 + 2**192 + 2**96 - 1
    b = int("5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604b", 16)
    n = int("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551", 16)
    g = ec.derive_private_key(1, ec.SECP256R1()).public_key().public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)
    prime_field = bytes.fromhex("06072a8648ce3d0101")
    field = _der(0x30, prime_field + _der_int(p))
    curve = _der(0x30, _der(0x04, (p - 3).to_bytes(32, "big")) + _der(0x04, b.to_bytes(32, "big")))
    return _der(0x30, _der_int(1) + field + curve + _der(0x04, g) + _der_int(n) + _der_int(1))


def der_octets(der):
    """The content of a DER OCTET STRING (CKA_EC_POINT is one)."""
    if der[0] != 0x04:
        raise ValueError("not an OCTET STRING")
    n = der[1]
    if n < 0x80:
        return bytes(der[2:2 + n])
    k = n & 0x7F
    ln = int.from_bytes(bytes(der[2:2 + k]), "big")
    return bytes(der[2 + k:2 + k + ln])


class TokenTest(unittest.TestCase):
    """A logged-in R/W session per test; session objects vanish with it."""

    def setUp(self):
        self.session = pkcs11.openSession(SLOT, CKF_SERIAL_SESSION | CKF_RW_SESSION)
        self.session.login(PIN)

    def tearDown(self):
        try:
            self.session.logout()
        except PyKCS11.PyKCS11Error:
            pass
        self.session.closeSession()

    def assertCKR(self, ckr, fn, *args):
        with self.assertRaises(PyKCS11.PyKCS11Error) as cm:
            fn(*args)
        self.assertEqual(cm.exception.value, ckr, str(cm.exception))

    def need(self, *mechs):
        have = set(pkcs11.getMechanismList(SLOT))
        for m in mechs:
            if m not in have:
                self.skipTest("%s not listed" % m)

    def aes_key(self, value=AES_KEY, extra=()):
        t = [
            (CKA_CLASS, CKO_SECRET_KEY), (CKA_KEY_TYPE, CKK_AES), (CKA_TOKEN, CK_FALSE),
            (CKA_VALUE, value), (CKA_ENCRYPT, CK_TRUE), (CKA_DECRYPT, CK_TRUE),
            (CKA_WRAP, CK_TRUE), (CKA_UNWRAP, CK_TRUE), (CKA_EXTRACTABLE, CK_TRUE),
            (CKA_SENSITIVE, CK_FALSE),
        ]
        overridden = set(a for a, _ in extra)
        t = [(a, v) for a, v in t if a not in overridden] + list(extra)
        return self.session.createObject(t)

    def rsa_pair(self, bits=2048):
        pub = [(CKA_CLASS, CKO_PUBLIC_KEY), (CKA_TOKEN, CK_FALSE), (CKA_MODULUS_BITS, bits),
               (CKA_PUBLIC_EXPONENT, (0x01, 0x00, 0x01)), (CKA_ENCRYPT, CK_TRUE),
               (CKA_VERIFY, CK_TRUE), (CKA_WRAP, CK_TRUE)]
        priv = [(CKA_CLASS, CKO_PRIVATE_KEY), (CKA_TOKEN, CK_FALSE), (CKA_PRIVATE, CK_TRUE),
                (CKA_SENSITIVE, CK_TRUE), (CKA_DECRYPT, CK_TRUE), (CKA_SIGN, CK_TRUE),
                (CKA_UNWRAP, CK_TRUE)]
        return self.session.generateKeyPair(pub, priv, mecha=PyKCS11.MechanismRSAGENERATEKEYPAIR)

    def rsa_public(self, pub):
        n, e = self.session.getAttributeValue(pub, [CKA_MODULUS, CKA_PUBLIC_EXPONENT])
        return rsa.RSAPublicNumbers(int.from_bytes(bytes(e), "big"),
                                    int.from_bytes(bytes(n), "big")).public_key()

    def ec_pair(self, derive=False, oid=P256_OID):
        pub = [(CKA_CLASS, CKO_PUBLIC_KEY), (CKA_TOKEN, CK_FALSE), (CKA_EC_PARAMS, oid),
               (CKA_VERIFY, CK_TRUE)]
        priv = [(CKA_CLASS, CKO_PRIVATE_KEY), (CKA_TOKEN, CK_FALSE), (CKA_PRIVATE, CK_TRUE),
                (CKA_SENSITIVE, CK_TRUE), (CKA_SIGN, CK_TRUE), (CKA_DERIVE, CK_TRUE if derive else CK_FALSE)]
        m = PyKCS11.Mechanism(CKM_EC_KEY_PAIR_GEN, None)
        return self.session.generateKeyPair(pub, priv, mecha=m)

    def ec_public(self, pub, oid=P256_OID):
        (point,) = self.session.getAttributeValue(pub, [CKA_EC_POINT])
        return ec.EllipticCurvePublicKey.from_encoded_point(CURVES[oid], der_octets(point))


class TestInfo(TokenTest):
    def test_getInfo(self):
        info = pkcs11.getInfo()
        self.assertIn(info.cryptokiVersion[0], (2, 3))
        self.assertTrue(info.manufacturerID.strip())
        self.assertTrue(info.libraryDescription.strip())

    def test_getSlotList(self):
        slots = pkcs11.getSlotList(tokenPresent=True)
        self.assertIn(SLOT, slots)
        self.assertTrue(set(slots) <= set(pkcs11.getSlotList()))
        si = pkcs11.getSlotInfo(SLOT)
        self.assertTrue(si.flags & CKF_TOKEN_PRESENT)

    def test_getTokenInfo(self):
        ti = pkcs11.getTokenInfo(SLOT)
        self.assertEqual(ti.label.strip(), LABEL)
        for f in (CKF_TOKEN_INITIALIZED, CKF_USER_PIN_INITIALIZED, CKF_LOGIN_REQUIRED):
            self.assertTrue(ti.flags & f, hex(f))
        self.assertTrue(ti.flags & CKF_RNG)
        self.assertLessEqual(ti.ulMinPinLen, len(PIN))

    def test_getMechanismList(self):
        mechs = pkcs11.getMechanismList(SLOT)
        for m in ("CKM_AES_CBC", "CKM_SHA256", "CKM_RSA_PKCS_KEY_PAIR_GEN", "CKM_SHA256_HMAC"):
            self.assertIn(m, mechs)

    def test_getMechanismInfo(self):
        i = pkcs11.getMechanismInfo(SLOT, "CKM_RSA_PKCS_KEY_PAIR_GEN")
        self.assertTrue(i.flags & CKF_GENERATE_KEY_PAIR)
        self.assertLessEqual(i.ulMinKeySize, 2048)
        self.assertGreaterEqual(i.ulMaxKeySize, 2048)
        i = pkcs11.getMechanismInfo(SLOT, "CKM_AES_CBC")
        self.assertTrue(i.flags & CKF_ENCRYPT and i.flags & CKF_DECRYPT)

    def test_unknown_mechanism_info(self):
        info = LowLevel.CK_MECHANISM_INFO()
        self.assertEqual(pkcs11.lib.C_GetMechanismInfo(SLOT, 0x7FFFFFF0, info), CKR_MECHANISM_INVALID)


class TestSession(TokenTest):
    def test_login_logout(self):
        self.assertEqual(self.session.getSessionInfo().state, CKS_RW_USER_FUNCTIONS)
        self.session.logout()
        self.assertEqual(self.session.getSessionInfo().state, CKS_RW_PUBLIC_SESSION)
        self.session.login(PIN)
        self.assertEqual(self.session.getSessionInfo().state, CKS_RW_USER_FUNCTIONS)

    def test_setPin(self):
        self.session.setPin(PIN, PIN + "56")
        self.session.logout()
        self.assertCKR(CKR_PIN_INCORRECT, self.session.login, PIN)
        self.session.login(PIN + "56")
        self.session.setPin(PIN + "56", PIN)

    def test_closed_session(self):
        s2 = pkcs11.openSession(SLOT)
        s2.closeSession()
        self.assertCKR(CKR_SESSION_HANDLE_INVALID, s2.generateRandom, 8)

    def test_session_info(self):
        info = self.session.getSessionInfo()
        self.assertEqual(info.slotID, SLOT)
        self.assertTrue(info.flags & CKF_RW_SESSION and info.flags & CKF_SERIAL_SESSION)

    def test_waitForSlotEvent_dont_block(self):
        with self.assertRaises(PyKCS11.PyKCS11Error) as cm:
            pkcs11.waitForSlotEvent(CKF_DONT_BLOCK)
        self.assertIn(cm.exception.value, (CKR_NO_EVENT, CKR_FUNCTION_NOT_SUPPORTED))
        if cm.exception.value != CKR_NO_EVENT:
            self.skipTest("C_WaitForSlotEvent not supported")

    def test_login_twice(self):
        self.assertCKR(CKR_USER_ALREADY_LOGGED_IN, self.session.login, PIN)

    def test_wrong_pin(self):
        self.session.logout()
        self.assertCKR(CKR_PIN_INCORRECT, self.session.login, PIN + "9")
        self.session.login(PIN)  # the counter resets

    def test_ro_session(self):
        ro = pkcs11.openSession(SLOT)
        try:
            self.assertEqual(ro.getSessionInfo().state, CKS_RO_USER_FUNCTIONS)
            self.assertCKR(CKR_SESSION_READ_ONLY, ro.createObject,
                           [(CKA_CLASS, CKO_DATA), (CKA_TOKEN, CK_TRUE), (CKA_VALUE, b"x")])
        finally:
            ro.closeSession()

    def test_private_objects_hidden_after_logout(self):
        self.session.createObject([(CKA_CLASS, CKO_DATA), (CKA_TOKEN, CK_FALSE), (CKA_PRIVATE, CK_TRUE),
                                   (CKA_LABEL, "py-private"), (CKA_VALUE, b"secret")])
        self.assertEqual(len(self.session.findObjects([(CKA_LABEL, "py-private")])), 1)
        self.session.logout()
        self.assertEqual(self.session.findObjects([(CKA_LABEL, "py-private")]), [])


class TestSymmetric(TokenTest):
    def test_generateKey_AES(self):
        t = [(CKA_CLASS, CKO_SECRET_KEY), (CKA_KEY_TYPE, CKK_AES), (CKA_TOKEN, CK_FALSE),
             (CKA_VALUE_LEN, 32), (CKA_ENCRYPT, CK_TRUE), (CKA_DECRYPT, CK_TRUE)]
        k = self.session.generateKey(t)
        vlen, ktype, local = self.session.getAttributeValue(k, [CKA_VALUE_LEN, CKA_KEY_TYPE, CKA_LOCAL])
        self.assertEqual((vlen, ktype, local), (32, CKK_AES, True))
        iv = bytes(16)
        ct = self.session.encrypt(k, MSG[:64], PyKCS11.Mechanism(CKM_AES_CBC, iv))
        self.assertEqual(bytes(self.session.decrypt(k, ct, PyKCS11.Mechanism(CKM_AES_CBC, iv))), MSG[:64])

    def test_generateKey_generic_secret(self):
        t = [(CKA_CLASS, CKO_SECRET_KEY), (CKA_KEY_TYPE, CKK_GENERIC_SECRET), (CKA_TOKEN, CK_FALSE),
             (CKA_VALUE_LEN, 32), (CKA_SIGN, CK_TRUE), (CKA_VERIFY, CK_TRUE),
             (CKA_SENSITIVE, CK_FALSE), (CKA_EXTRACTABLE, CK_TRUE)]
        k = self.session.generateKey(t, mecha=PyKCS11.Mechanism(CKM_GENERIC_SECRET_KEY_GEN))
        (value,) = self.session.getAttributeValue(k, [CKA_VALUE])
        self.assertEqual(len(value), 32)
        mac = self.session.sign(k, MSG, PyKCS11.Mechanism(CKM_SHA256_HMAC))
        self.assertEqual(bytes(mac), hmac.new(bytes(value), MSG, hashlib.sha256).digest())

    def test_aes_ecb(self):
        k = self.aes_key()
        ct = bytes(self.session.encrypt(k, MSG[:96], PyKCS11.Mechanism(CKM_AES_ECB)))
        e = Cipher(algorithms.AES(AES_KEY), modes.ECB()).encryptor()
        self.assertEqual(ct, e.update(MSG[:96]) + e.finalize())
        self.assertEqual(bytes(self.session.decrypt(k, ct, PyKCS11.Mechanism(CKM_AES_ECB))), MSG[:96])

    def test_aes_cbc(self):
        k = self.aes_key()
        iv = bytes(range(16))
        ct = bytes(self.session.encrypt(k, MSG[:96], PyKCS11.Mechanism(CKM_AES_CBC, iv)))
        e = Cipher(algorithms.AES(AES_KEY), modes.CBC(iv)).encryptor()
        self.assertEqual(ct, e.update(MSG[:96]) + e.finalize())
        self.assertEqual(bytes(self.session.decrypt(k, ct, PyKCS11.Mechanism(CKM_AES_CBC, iv))), MSG[:96])

    def test_aes_cbc_pad(self):
        k = self.aes_key()
        iv = bytes(range(16, 32))
        ct = bytes(self.session.encrypt(k, MSG, PyKCS11.Mechanism(CKM_AES_CBC_PAD, iv)))
        p = sympadding.PKCS7(128).padder()
        e = Cipher(algorithms.AES(AES_KEY), modes.CBC(iv)).encryptor()
        self.assertEqual(ct, e.update(p.update(MSG) + p.finalize()) + e.finalize())
        self.assertEqual(bytes(self.session.decrypt(k, ct, PyKCS11.Mechanism(CKM_AES_CBC_PAD, iv))), MSG)

    def test_aes_cbc_wrong_length(self):
        k = self.aes_key()
        self.assertCKR(CKR_DATA_LEN_RANGE, self.session.encrypt, k, b"x" * 15,
                       PyKCS11.Mechanism(CKM_AES_CBC, bytes(16)))

    def test_aes_gcm(self):
        self.need("CKM_AES_GCM")
        k = self.aes_key()
        iv, aad = bytes(range(12)), b"header"
        m = PyKCS11.AES_GCM_Mechanism(iv, aad, 128)
        ct = bytes(self.session.encrypt(k, MSG, m))
        self.assertEqual(ct, AESGCM(AES_KEY).encrypt(iv, MSG, aad))
        self.assertEqual(bytes(self.session.decrypt(k, ct, PyKCS11.AES_GCM_Mechanism(iv, aad, 128))), MSG)
        bad = ct[:-1] + bytes([ct[-1] ^ 1])
        with self.assertRaises(PyKCS11.PyKCS11Error) as cm:
            self.session.decrypt(k, bad, PyKCS11.AES_GCM_Mechanism(iv, aad, 128))
        self.assertIn(cm.exception.value, (CKR_ENCRYPTED_DATA_INVALID, CKR_GENERAL_ERROR))

    def test_aes_gcm_short_tag(self):
        self.need("CKM_AES_GCM")
        k = self.aes_key()
        iv, aad = bytes(range(12)), b"header"
        ct = bytes(self.session.encrypt(k, MSG, PyKCS11.AES_GCM_Mechanism(iv, aad, 96)))
        full = AESGCM(AES_KEY).encrypt(iv, MSG, aad)
        self.assertEqual(ct, full[:len(MSG) + 12])
        self.assertEqual(bytes(self.session.decrypt(k, ct, PyKCS11.AES_GCM_Mechanism(iv, aad, 96))), MSG)

    def test_key_function_not_permitted(self):
        k = self.aes_key(extra=[(CKA_ENCRYPT, CK_FALSE)])
        self.assertCKR(CKR_KEY_FUNCTION_NOT_PERMITTED, self.session.encrypt, k, bytes(16),
                       PyKCS11.Mechanism(CKM_AES_ECB))

    def test_hmac(self):
        k = self.session.createObject([
            (CKA_CLASS, CKO_SECRET_KEY), (CKA_KEY_TYPE, CKK_GENERIC_SECRET), (CKA_TOKEN, CK_FALSE),
            (CKA_VALUE, HMAC_KEY), (CKA_SIGN, CK_TRUE), (CKA_VERIFY, CK_TRUE)])
        for mech, h in ((CKM_SHA256_HMAC, hashlib.sha256), (CKM_SHA384_HMAC, hashlib.sha384),
                        (CKM_SHA512_HMAC, hashlib.sha512), (CKM_SHA_1_HMAC, hashlib.sha1)):
            want = hmac.new(HMAC_KEY, MSG, h).digest()
            got = bytes(self.session.sign(k, MSG, PyKCS11.Mechanism(mech)))
            self.assertEqual(got, want, PyKCS11.CKM[mech])
            self.assertTrue(self.session.verify(k, MSG, want, PyKCS11.Mechanism(mech)))
            self.assertFalse(self.session.verify(k, MSG + b"!", want, PyKCS11.Mechanism(mech)))

    def test_digest(self):
        for mech, h in ((CKM_SHA_1, hashlib.sha1), (CKM_SHA256, hashlib.sha256),
                        (CKM_SHA384, hashlib.sha384), (CKM_SHA512, hashlib.sha512)):
            got = bytes(self.session.digest(MSG, PyKCS11.Mechanism(mech)))
            self.assertEqual(got, h(MSG).digest(), PyKCS11.CKM[mech])

    def test_digest_multipart(self):
        d = self.session.digestSession(PyKCS11.Mechanism(CKM_SHA256))
        for i in range(0, len(MSG), 7):
            d.update(MSG[i:i + 7])
        self.assertEqual(bytes(d.final()), hashlib.sha256(MSG).digest())

    def test_wrap_unwrap_aes_key_wrap(self):
        self.need("CKM_AES_KEY_WRAP")
        kek = self.aes_key()
        inner_value = bytes(range(200, 232))
        inner = self.aes_key(inner_value)
        m = PyKCS11.Mechanism(CKM_AES_KEY_WRAP)
        wrapped = bytes(self.session.wrapKey(kek, inner, m))
        self.assertEqual(wrapped, aes_key_wrap(AES_KEY, inner_value))
        t = [(CKA_CLASS, CKO_SECRET_KEY), (CKA_KEY_TYPE, CKK_AES), (CKA_TOKEN, CK_FALSE),
             (CKA_ENCRYPT, CK_TRUE), (CKA_DECRYPT, CK_TRUE), (CKA_SENSITIVE, CK_FALSE),
             (CKA_EXTRACTABLE, CK_TRUE)]
        k2 = self.session.unwrapKey(kek, wrapped, t, m)
        (v,) = self.session.getAttributeValue(k2, [CKA_VALUE])
        self.assertEqual(bytes(v), inner_value)

    def test_wrap_refused_when_not_extractable(self):
        self.need("CKM_AES_KEY_WRAP")
        kek = self.aes_key()
        inner = self.aes_key(bytes(32), [(CKA_EXTRACTABLE, CK_FALSE), (CKA_SENSITIVE, CK_TRUE)])
        self.assertCKR(CKR_KEY_UNEXTRACTABLE, self.session.wrapKey, kek, inner,
                       PyKCS11.Mechanism(CKM_AES_KEY_WRAP))


    def test_aes_ctr(self):
        self.need("CKM_AES_CTR")
        k = self.aes_key()
        ctr = bytes(range(0xF0, 0x100))
        # CK_AES_CTR_PARAMS: CK_ULONG ulCounterBits, CK_BYTE cb[16] (LP64 layout)
        m = PyKCS11.Mechanism(CKM_AES_CTR, struct.pack("<Q", 128) + ctr)
        ct = bytes(self.session.encrypt(k, MSG, m))
        e = Cipher(algorithms.AES(AES_KEY), modes.CTR(ctr)).encryptor()
        self.assertEqual(ct, e.update(MSG) + e.finalize())
        m = PyKCS11.Mechanism(CKM_AES_CTR, struct.pack("<Q", 128) + ctr)
        self.assertEqual(bytes(self.session.decrypt(k, ct, m)), MSG)

    def test_aes_cmac(self):
        self.need("CKM_AES_CMAC")
        k = self.aes_key(extra=[(CKA_SIGN, CK_TRUE), (CKA_VERIFY, CK_TRUE)])
        mac = bytes(self.session.sign(k, MSG, PyKCS11.Mechanism(CKM_AES_CMAC)))
        c = CMAC(algorithms.AES(AES_KEY))
        c.update(MSG)
        self.assertEqual(mac, c.finalize())
        self.assertTrue(self.session.verify(k, MSG, mac, PyKCS11.Mechanism(CKM_AES_CMAC)))

    def test_aes_big_message(self):
        k = self.aes_key()
        data = os.urandom(1 << 20)
        iv = bytes(16)
        ct = bytes(self.session.encrypt(k, data, PyKCS11.Mechanism(CKM_AES_CBC_PAD, iv)))
        d = Cipher(algorithms.AES(AES_KEY), modes.CBC(iv)).decryptor()
        u = sympadding.PKCS7(128).unpadder()
        self.assertEqual(u.update(d.update(ct) + d.finalize()) + u.finalize(), data)

    def test_check_value(self):
        k = self.aes_key()
        (kcv,) = self.session.getAttributeValue(k, [CKA_CHECK_VALUE])
        if kcv is None:
            self.skipTest("no CKA_CHECK_VALUE")
        e = Cipher(algorithms.AES(AES_KEY), modes.ECB()).encryptor()
        self.assertEqual(bytes(kcv), (e.update(bytes(16)) + e.finalize())[:3])

    def test_digest_key(self):
        k = self.session.createObject([
            (CKA_CLASS, CKO_SECRET_KEY), (CKA_KEY_TYPE, CKK_GENERIC_SECRET), (CKA_TOKEN, CK_FALSE),
            (CKA_VALUE, HMAC_KEY)])
        d = self.session.digestSession(PyKCS11.Mechanism(CKM_SHA256))
        d.update(b"prefix")
        d.digestKey(k)
        self.assertEqual(bytes(d.final()), hashlib.sha256(b"prefix" + HMAC_KEY).digest())

    def test_hmac_key_type(self):
        k = self.session.createObject([
            (CKA_CLASS, CKO_SECRET_KEY), (CKA_KEY_TYPE, CKK_SHA256_HMAC), (CKA_TOKEN, CK_FALSE),
            (CKA_VALUE, HMAC_KEY[:32]), (CKA_SIGN, CK_TRUE)])
        got = bytes(self.session.sign(k, MSG, PyKCS11.Mechanism(CKM_SHA256_HMAC)))
        self.assertEqual(got, hmac.new(HMAC_KEY[:32], MSG, hashlib.sha256).digest())

    def test_wrap_unwrap_aes_key_wrap_pad(self):
        for name in ("CKM_AES_KEY_WRAP_PAD", "CKM_AES_KEY_WRAP_KWP"):
            if name not in pkcs11.getMechanismList(SLOT):
                continue
            with self.subTest(name):
                kek = self.aes_key()
                inner_value = bytes(range(1, 37))  # 36 bytes: padding needed, long enough for SoftHSMv2's HMAC minimum
                inner = self.session.createObject([
                    (CKA_CLASS, CKO_SECRET_KEY), (CKA_KEY_TYPE, CKK_GENERIC_SECRET), (CKA_TOKEN, CK_FALSE),
                    (CKA_VALUE, inner_value), (CKA_EXTRACTABLE, CK_TRUE), (CKA_SENSITIVE, CK_TRUE)])
                m = PyKCS11.Mechanism(PyKCS11.CKM[name])
                wrapped = bytes(self.session.wrapKey(kek, inner, m))
                if name == "CKM_AES_KEY_WRAP_KWP":
                    self.assertEqual(wrapped, aes_key_wrap_with_padding(AES_KEY, inner_value))
                t = [(CKA_CLASS, CKO_SECRET_KEY), (CKA_KEY_TYPE, CKK_GENERIC_SECRET), (CKA_TOKEN, CK_FALSE),
                     (CKA_SIGN, CK_TRUE)]
                k2 = self.session.unwrapKey(kek, wrapped, t, m)
                mac = bytes(self.session.sign(k2, MSG, PyKCS11.Mechanism(CKM_SHA256_HMAC)))
                self.assertEqual(mac, hmac.new(inner_value, MSG, hashlib.sha256).digest())
                local, = self.session.getAttributeValue(k2, [CKA_LOCAL])
                self.assertFalse(local)

    def test_public_session_key_without_login(self):
        self.session.logout()
        t = [(CKA_CLASS, CKO_SECRET_KEY), (CKA_KEY_TYPE, CKK_AES), (CKA_TOKEN, CK_FALSE),
             (CKA_PRIVATE, CK_FALSE), (CKA_VALUE_LEN, 16), (CKA_ENCRYPT, CK_TRUE)]
        k = self.session.generateKey(t)
        self.assertEqual(len(self.session.encrypt(k, bytes(16), PyKCS11.Mechanism(CKM_AES_ECB))), 16)


class TestRSA(TokenTest):
    @classmethod
    def setUpClass(cls):
        cls.s = pkcs11.openSession(SLOT, CKF_SERIAL_SESSION | CKF_RW_SESSION)
        cls.s.login(PIN)
        pub = [(CKA_CLASS, CKO_PUBLIC_KEY), (CKA_TOKEN, CK_TRUE), (CKA_MODULUS_BITS, 2048),
               (CKA_PUBLIC_EXPONENT, (0x01, 0x00, 0x01)), (CKA_ENCRYPT, CK_TRUE),
               (CKA_VERIFY, CK_TRUE), (CKA_WRAP, CK_TRUE), (CKA_LABEL, "py-rsa"), (CKA_ID, b"\x01")]
        priv = [(CKA_CLASS, CKO_PRIVATE_KEY), (CKA_TOKEN, CK_TRUE), (CKA_PRIVATE, CK_TRUE),
                (CKA_SENSITIVE, CK_TRUE), (CKA_DECRYPT, CK_TRUE), (CKA_SIGN, CK_TRUE),
                (CKA_UNWRAP, CK_TRUE), (CKA_LABEL, "py-rsa"), (CKA_ID, b"\x01")]
        cls.s.generateKeyPair(pub, priv, mecha=PyKCS11.MechanismRSAGENERATEKEYPAIR)
        cls.s.logout()
        cls.s.closeSession()

    def keys(self):
        pub = self.session.findObjects([(CKA_CLASS, CKO_PUBLIC_KEY), (CKA_LABEL, "py-rsa")])
        priv = self.session.findObjects([(CKA_CLASS, CKO_PRIVATE_KEY), (CKA_LABEL, "py-rsa")])
        self.assertEqual((len(pub), len(priv)), (1, 1))
        return pub[0], priv[0]

    def test_generateKeyPair_attributes(self):
        pub, priv = self.keys()
        bits, = self.session.getAttributeValue(pub, [CKA_MODULUS_BITS])
        self.assertEqual(bits, 2048)
        n1, = self.session.getAttributeValue(pub, [CKA_MODULUS])
        n2, = self.session.getAttributeValue(priv, [CKA_MODULUS])
        self.assertEqual(bytes(n1), bytes(n2))
        sens, extr, asens, nextr = self.session.getAttributeValue(
            priv, [CKA_SENSITIVE, CKA_EXTRACTABLE, CKA_ALWAYS_SENSITIVE, CKA_NEVER_EXTRACTABLE])
        self.assertTrue(sens and asens)

    def test_sensitive_attribute_refused(self):
        _, priv = self.keys()
        self.assertEqual(self.session.getAttributeValue(priv, [CKA_PRIVATE_EXPONENT]), [None])
        t = LowLevel.ckattrlist(1)
        t[0].SetType(CKA_PRIVATE_EXPONENT)
        rv = pkcs11.lib.C_GetAttributeValue(self.session.session, priv, t)
        self.assertEqual(rv, CKR_ATTRIBUTE_SENSITIVE)

    def test_sign_pkcs1(self):
        pub, priv = self.keys()
        sig = bytes(self.session.sign(priv, MSG, PyKCS11.Mechanism(CKM_SHA256_RSA_PKCS)))
        self.rsa_public(pub).verify(sig, MSG, padding.PKCS1v15(), hashes.SHA256())
        self.assertTrue(self.session.verify(pub, MSG, sig, PyKCS11.Mechanism(CKM_SHA256_RSA_PKCS)))
        bad = sig[:-1] + bytes([sig[-1] ^ 1])
        self.assertFalse(self.session.verify(pub, MSG, bad, PyKCS11.Mechanism(CKM_SHA256_RSA_PKCS)))

    def test_sign_pss(self):
        self.need("CKM_SHA256_RSA_PKCS_PSS")
        pub, priv = self.keys()
        m = PyKCS11.RSA_PSS_Mechanism(CKM_SHA256_RSA_PKCS_PSS, CKM_SHA256, CKG_MGF1_SHA256, 32)
        sig = bytes(self.session.sign(priv, MSG, m))
        self.rsa_public(pub).verify(sig, MSG, padding.PSS(padding.MGF1(hashes.SHA256()), 32), hashes.SHA256())
        self.assertTrue(self.session.verify(pub, MSG, sig, m))

    def oaep(self, ckm, mgf, h):
        self.need("CKM_RSA_PKCS_OAEP")
        pub, priv = self.keys()
        m = PyKCS11.RSAOAEPMechanism(ckm, mgf)
        ct = self.rsa_public(pub).encrypt(MSG[:64], padding.OAEP(padding.MGF1(h), h, None))
        self.assertEqual(bytes(self.session.decrypt(priv, ct, m)), MSG[:64])
        ct2 = self.session.encrypt(pub, MSG[:32], m)
        self.assertEqual(bytes(self.session.decrypt(priv, ct2, m)), MSG[:32])

    def test_oaep_sha1(self):
        self.oaep(CKM_SHA_1, CKG_MGF1_SHA1, hashes.SHA1())

    def test_oaep_sha256(self):
        self.oaep(CKM_SHA256, CKG_MGF1_SHA256, hashes.SHA256())

    def test_sign_sha384_sha512_pkcs1(self):
        pub, priv = self.keys()
        for mech, h in ((CKM_SHA384_RSA_PKCS, hashes.SHA384()), (CKM_SHA512_RSA_PKCS, hashes.SHA512())):
            sig = bytes(self.session.sign(priv, MSG, PyKCS11.Mechanism(mech)))
            self.rsa_public(pub).verify(sig, MSG, padding.PKCS1v15(), h)

    def test_rsa_pkcs_encrypt(self):
        pub, priv = self.keys()
        ct = self.rsa_public(pub).encrypt(MSG[:40], padding.PKCS1v15())
        self.assertEqual(bytes(self.session.decrypt(priv, ct, PyKCS11.MechanismRSAPKCS1)), MSG[:40])
        ct2 = self.session.encrypt(pub, MSG[:40], PyKCS11.MechanismRSAPKCS1)
        self.assertEqual(bytes(self.session.decrypt(priv, ct2, PyKCS11.MechanismRSAPKCS1)), MSG[:40])

    def test_wrong_key_type(self):
        pub, priv = self.keys()
        self.assertCKR(CKR_KEY_TYPE_INCONSISTENT, self.session.sign, priv, MSG, PyKCS11.Mechanism(CKM_SHA256_HMAC))

    def test_wrap_aes_with_rsa_oaep(self):
        self.need("CKM_RSA_PKCS_OAEP")
        pub, priv = self.keys()
        inner = self.aes_key()
        m = PyKCS11.RSAOAEPMechanism(CKM_SHA_1, CKG_MGF1_SHA1)
        wrapped = self.session.wrapKey(pub, inner, m)
        t = [(CKA_CLASS, CKO_SECRET_KEY), (CKA_KEY_TYPE, CKK_AES), (CKA_TOKEN, CK_FALSE),
             (CKA_ENCRYPT, CK_TRUE), (CKA_SENSITIVE, CK_FALSE), (CKA_EXTRACTABLE, CK_TRUE)]
        k2 = self.session.unwrapKey(priv, wrapped, t, m)
        (v,) = self.session.getAttributeValue(k2, [CKA_VALUE])
        self.assertEqual(bytes(v), AES_KEY)


class TestEC(TokenTest):
    def test_generateKeyPair_EC(self):
        pub, priv = self.ec_pair()
        params, = self.session.getAttributeValue(priv, [CKA_EC_PARAMS])
        self.assertEqual(bytes(params), P256_OID)
        self.ec_public(pub)  # a valid point on P-256

    def test_ecdsa(self):
        pub, priv = self.ec_pair()
        digest = hashlib.sha256(MSG).digest()
        sig = bytes(self.session.sign(priv, digest, PyKCS11.Mechanism(CKM_ECDSA)))
        self.assertEqual(len(sig), 64)
        der = encode_dss_signature(int.from_bytes(sig[:32], "big"), int.from_bytes(sig[32:], "big"))
        self.ec_public(pub).verify(der, MSG, ec.ECDSA(hashes.SHA256()))
        self.assertTrue(self.session.verify(pub, digest, sig, PyKCS11.Mechanism(CKM_ECDSA)))
        self.assertFalse(self.session.verify(pub, bytes(32), sig, PyKCS11.Mechanism(CKM_ECDSA)))

    def test_ecdsa_sha256(self):
        self.need("CKM_ECDSA_SHA256")
        pub, priv = self.ec_pair()
        sig = bytes(self.session.sign(priv, MSG, PyKCS11.Mechanism(CKM_ECDSA_SHA256)))
        der = encode_dss_signature(int.from_bytes(sig[:32], "big"), int.from_bytes(sig[32:], "big"))
        self.ec_public(pub).verify(der, MSG, ec.ECDSA(hashes.SHA256()))

    def ecdh(self, oid, kdf=CKD_NULL, length=None):
        self.need("CKM_ECDH1_DERIVE")
        pub, priv = self.ec_pair(derive=True, oid=oid)
        peer = ec.generate_private_key(CURVES[oid])
        peer_point = peer.public_key().public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)
        t = [(CKA_CLASS, CKO_SECRET_KEY), (CKA_KEY_TYPE, CKK_GENERIC_SECRET), (CKA_TOKEN, CK_FALSE),
             (CKA_SENSITIVE, CK_FALSE), (CKA_EXTRACTABLE, CK_TRUE)]
        if length:
            t.append((CKA_VALUE_LEN, length))
        k = self.session.deriveKey(priv, t, PyKCS11.ECDH1_DERIVE_Mechanism(peer_point, kdf))
        (v,) = self.session.getAttributeValue(k, [CKA_VALUE])
        return bytes(v), peer.exchange(ec.ECDH(), self.ec_public(pub, oid))

    def test_ecdh_derive(self):
        got, z = self.ecdh(P256_OID, length=32)
        self.assertEqual(got, z)

    def test_ecdh_derive_p384(self):
        got, z = self.ecdh(P384_OID, length=48)
        self.assertEqual(got, z)

    def test_ecdh_derive_secp256k1(self):
        got, z = self.ecdh(K256_OID, length=32)
        self.assertEqual(got, z)

    def test_ecdh_derive_p192(self):
        # python-pkcs11's test_ecc derives on prime192v1.
        got, z = self.ecdh(P192_OID, length=24)
        self.assertEqual(got, z)

    def test_ecdsa_p192_short_data(self):
        # CKM_ECDSA of data shorter than the order (python-pkcs11 signs
        # b"HI BOB!" so): the data is the hash, left-padded.
        pub, priv = self.ec_pair(oid=P192_OID)
        sig = bytes(self.session.sign(priv, b"HI BOB!", PyKCS11.Mechanism(CKM_ECDSA)))
        self.assertEqual(len(sig), 48)
        q = self.ec_public(pub, P192_OID).public_numbers()
        self.assertTrue(ecdsa_verify_p192((q.x, q.y), int.from_bytes(b"HI BOB!", "big"),
                                          int.from_bytes(sig[:24], "big"), int.from_bytes(sig[24:], "big")))
        self.assertTrue(self.session.verify(pub, b"HI BOB!", sig, PyKCS11.Mechanism(CKM_ECDSA)))

    def test_explicit_ec_params(self):
        # A key whose CKA_EC_PARAMS spells out P-256 (X9.62 specifiedCurve,
        # as OpenSSL writes it and python-pkcs11's test_ecc imports it):
        # the private key signs, the public key verifies, the parameters
        # read back as given.
        params = explicit_params_p256()
        peer = ec.generate_private_key(ec.SECP256R1())
        d = peer.private_numbers().private_value.to_bytes(32, "big")
        point = peer.public_key().public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)
        priv = self.session.createObject([(CKA_CLASS, CKO_PRIVATE_KEY), (CKA_KEY_TYPE, CKK_EC), (CKA_TOKEN, CK_FALSE),
                                          (CKA_EC_PARAMS, params), (CKA_VALUE, d)])
        pub = self.session.createObject([(CKA_CLASS, CKO_PUBLIC_KEY), (CKA_KEY_TYPE, CKK_EC), (CKA_TOKEN, CK_FALSE),
                                         (CKA_EC_PARAMS, params), (CKA_EC_POINT, bytes([4, len(point)]) + point)])
        digest = hashlib.sha256(MSG).digest()
        sig = bytes(self.session.sign(priv, digest, PyKCS11.Mechanism(CKM_ECDSA)))
        der = encode_dss_signature(int.from_bytes(sig[:32], "big"), int.from_bytes(sig[32:], "big"))
        peer.public_key().verify(der, MSG, ec.ECDSA(hashes.SHA256()))
        self.assertTrue(self.session.verify(pub, digest, sig, PyKCS11.Mechanism(CKM_ECDSA)))
        (back,) = self.session.getAttributeValue(pub, [CKA_EC_PARAMS])
        self.assertEqual(bytes(back), params)

    def test_ecdh_derive_sha256_kdf(self):
        got, z = self.ecdh(P256_OID, kdf=CKD_SHA256_KDF, length=32)
        self.assertEqual(got, X963KDF(hashes.SHA256(), 32, None).derive(z))

    def test_ecdh_derive_aes_key(self):
        self.need("CKM_ECDH1_DERIVE")
        pub, priv = self.ec_pair(derive=True)
        peer = ec.generate_private_key(ec.SECP256R1())
        peer_point = peer.public_key().public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)
        t = [(CKA_CLASS, CKO_SECRET_KEY), (CKA_KEY_TYPE, CKK_AES), (CKA_TOKEN, CK_FALSE),
             (CKA_VALUE_LEN, 16), (CKA_ENCRYPT, CK_TRUE), (CKA_DECRYPT, CK_TRUE)]
        k = self.session.deriveKey(priv, t, PyKCS11.ECDH1_DERIVE_Mechanism(peer_point))
        z = peer.exchange(ec.ECDH(), self.ec_public(pub))
        ct = bytes(self.session.encrypt(k, bytes(16), PyKCS11.Mechanism(CKM_AES_ECB)))
        # PKCS#11 does not say which end of Z a shorter key takes: this
        # module takes the leading bytes (as OpenSSL and kryoptic do),
        # SoftHSMv2 2.6 the trailing ones. AES-ECB of zeros tells which.
        def ecb0(key):
            e = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
            return e.update(bytes(16)) + e.finalize()
        self.assertNotEqual(ct, ecb0(z[-16:]), "the key is the trailing bytes of Z")
        self.assertEqual(ct, ecb0(z[:16]))

    def test_ecdsa_p384(self):
        pub, priv = self.ec_pair(oid=P384_OID)
        digest = hashlib.sha384(MSG).digest()
        sig = bytes(self.session.sign(priv, digest, PyKCS11.Mechanism(CKM_ECDSA)))
        self.assertEqual(len(sig), 96)
        der = encode_dss_signature(int.from_bytes(sig[:48], "big"), int.from_bytes(sig[48:], "big"))
        self.ec_public(pub, P384_OID).verify(der, MSG, ec.ECDSA(hashes.SHA384()))

    def test_ed25519(self):
        self.need("CKM_EC_EDWARDS_KEY_PAIR_GEN", "CKM_EDDSA")
        pubt = [(CKA_CLASS, CKO_PUBLIC_KEY), (CKA_TOKEN, CK_FALSE), (CKA_EC_PARAMS, ED25519_OID),
                (CKA_VERIFY, CK_TRUE)]
        privt = [(CKA_CLASS, CKO_PRIVATE_KEY), (CKA_TOKEN, CK_FALSE), (CKA_SIGN, CK_TRUE)]
        pub, priv = self.session.generateKeyPair(pubt, privt, mecha=PyKCS11.Mechanism(CKM_EC_EDWARDS_KEY_PAIR_GEN))
        sig = bytes(self.session.sign(priv, MSG, PyKCS11.Mechanism(CKM_EDDSA)))
        (point,) = self.session.getAttributeValue(pub, [CKA_EC_POINT])
        raw = bytes(point)
        if len(raw) != 32:
            raw = der_octets(raw)
        ed25519.Ed25519PublicKey.from_public_bytes(raw).verify(sig, MSG)
        self.assertTrue(self.session.verify(pub, MSG, sig, PyKCS11.Mechanism(CKM_EDDSA)))


class TestObjects(TokenTest):
    def test_create_find_destroy(self):
        h = self.session.createObject([(CKA_CLASS, CKO_DATA), (CKA_TOKEN, CK_TRUE), (CKA_PRIVATE, CK_FALSE),
                                       (CKA_LABEL, "py-data"), (CKA_APPLICATION, "pykcs11"),
                                       (CKA_VALUE, b"hello")])
        found = self.session.findObjects([(CKA_CLASS, CKO_DATA), (CKA_LABEL, "py-data")])
        self.assertEqual(len(found), 1)
        v, app = self.session.getAttributeValue(found[0], [CKA_VALUE, CKA_APPLICATION])
        self.assertEqual((bytes(v), app), (b"hello", "pykcs11"))
        # a second session sees the token object
        s2 = pkcs11.openSession(SLOT)
        try:
            self.assertEqual(len(s2.findObjects([(CKA_LABEL, "py-data")])), 1)
        finally:
            s2.closeSession()
        self.session.destroyObject(h)
        self.assertEqual(self.session.findObjects([(CKA_LABEL, "py-data")]), [])

    def test_findObjects_templates(self):
        for i in range(3):
            self.session.createObject([(CKA_CLASS, CKO_DATA), (CKA_TOKEN, CK_FALSE),
                                       (CKA_LABEL, "py-many"), (CKA_APPLICATION, "app%d" % i)])
        self.assertEqual(len(self.session.findObjects([(CKA_LABEL, "py-many")])), 3)
        self.assertEqual(len(self.session.findObjects([(CKA_LABEL, "py-many"), (CKA_APPLICATION, "app2")])), 1)
        self.assertEqual(self.session.findObjects([(CKA_LABEL, "py-many"), (CKA_APPLICATION, "app7")]), [])
        self.assertEqual(self.session.findObjects([(CKA_LABEL, "py-many"), (CKA_CLASS, CKO_SECRET_KEY)]), [])

    def test_copyObject(self):
        # PyKCS11 1.5.12 has no C_CopyObject: a user reaches the module's
        # exported function through ctypes (dlopen gives the same instance).
        class Attr(ctypes.Structure):
            _fields_ = [("type", ctypes.c_ulong), ("pValue", ctypes.c_void_p), ("ulValueLen", ctypes.c_ulong)]
        label = ctypes.create_string_buffer(b"py-copy", 7)
        tmpl = (Attr * 1)(Attr(CKA_LABEL, ctypes.cast(label, ctypes.c_void_p), 7))
        k = self.aes_key(extra=[(CKA_LABEL, "py-original")])
        out = ctypes.c_ulong()
        fn = ctypes.CDLL(LIB).C_CopyObject
        fn.argtypes = [ctypes.c_ulong, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.POINTER(ctypes.c_ulong)]
        rv = fn(self.session.session.value(), k.value(), tmpl, 1, ctypes.byref(out))
        self.assertEqual(rv, CKR_OK)
        (copy,) = self.session.findObjects([(CKA_LABEL, "py-copy")])
        self.assertEqual(copy.value(), out.value)
        ct = self.session.encrypt(copy, bytes(16), PyKCS11.Mechanism(CKM_AES_ECB))
        e = Cipher(algorithms.AES(AES_KEY), modes.ECB()).encryptor()
        self.assertEqual(bytes(ct), e.update(bytes(16)) + e.finalize())
        self.assertEqual(len(self.session.findObjects([(CKA_LABEL, "py-original")])), 1)

    def test_getAttributeValue_invalid_type(self):
        # CKR_ATTRIBUTE_TYPE_INVALID for one attribute: PyKCS11 asks again
        # one by one and gives None for it, the others filled in.
        k = self.aes_key(extra=[(CKA_LABEL, "mixed")])
        label, modulus, ktype = self.session.getAttributeValue(k, [CKA_LABEL, CKA_MODULUS, CKA_KEY_TYPE])
        self.assertEqual((label, modulus, ktype), ("mixed", None, CKK_AES))
        t = LowLevel.ckattrlist(2)
        t[0].SetType(CKA_KEY_TYPE)
        t[1].SetType(CKA_MODULUS)
        self.assertEqual(pkcs11.lib.C_GetAttributeValue(self.session.session, k, t), CKR_ATTRIBUTE_TYPE_INVALID)

    def test_setAttributeValue(self):
        k = self.aes_key(extra=[(CKA_LABEL, "before")])
        self.session.setAttributeValue(k, [(CKA_LABEL, "after"), (CKA_ID, b"\x42")])
        label, kid = self.session.getAttributeValue(k, [CKA_LABEL, CKA_ID])
        self.assertEqual((label, bytes(kid)), ("after", b"\x42"))
        self.assertCKR(CKR_ATTRIBUTE_READ_ONLY, self.session.setAttributeValue, k, [(CKA_CLASS, CKO_DATA)])

    def test_sensitive_cannot_be_cleared(self):
        k = self.aes_key(extra=[(CKA_SENSITIVE, CK_TRUE)])
        self.assertEqual(self.session.getAttributeValue(k, [CKA_VALUE]), [None])
        self.assertCKR(CKR_ATTRIBUTE_READ_ONLY, self.session.setAttributeValue, k, [(CKA_SENSITIVE, CK_FALSE)])

    def test_destroy_invalid_handle(self):
        h = PyKCS11.CK_OBJECT_HANDLE(self.session)
        h.assign(0x7FFFFF00)
        self.assertCKR(CKR_OBJECT_HANDLE_INVALID, self.session.destroyObject, h)

    def test_create_incomplete_template(self):
        with self.assertRaises(PyKCS11.PyKCS11Error) as cm:
            self.session.createObject([(CKA_CLASS, CKO_SECRET_KEY), (CKA_KEY_TYPE, CKK_AES), (CKA_TOKEN, CK_FALSE)])
        self.assertIn(cm.exception.value, (CKR_TEMPLATE_INCOMPLETE, CKR_ATTRIBUTE_VALUE_INVALID))


class TestRandom(TokenTest):
    def test_generateRandom(self):
        a = bytes(self.session.generateRandom(64))
        b = bytes(self.session.generateRandom(64))
        self.assertEqual(len(a), 64)
        self.assertNotEqual(a, b)
        self.assertNotEqual(a, bytes(64))

    def test_seedRandom(self):
        try:
            self.session.seedRandom(b"extra entropy")
        except PyKCS11.PyKCS11Error as e:
            self.assertEqual(e.value, CKR_RANDOM_SEED_NOT_SUPPORTED)
        self.assertEqual(len(self.session.generateRandom(16)), 16)


class _Attr(ctypes.Structure):
    _fields_ = [("type", ctypes.c_ulong), ("pValue", ctypes.c_void_p), ("ulValueLen", ctypes.c_ulong)]


class _Mech(ctypes.Structure):
    _fields_ = [("mechanism", ctypes.c_ulong), ("pParameter", ctypes.c_void_p), ("ulParameterLen", ctypes.c_ulong)]


class TestPythonPkcs11Habits(TokenTest):
    """What python-pkcs11 (the "pkcs11" package, whose suite runs on
    SoftHSMv2) does at the C level, through the module's exported C_*
    functions (ctypes, the instance PyKCS11 loaded): templates with empty
    CKA_ID and CKA_LABEL and all seven usage flags, the length query of an
    Update with a NULL output, retries after CKR_BUFFER_TOO_SMALL, one
    C_GetAttributeValue for several attributes, C_FindObjects in batches,
    C_DigestKey, C_SeedRandom."""

    def setUp(self):
        super().setUp()
        self.lib = ctypes.CDLL(LIB)
        self.h = ctypes.c_ulong(self.session.session.value())
        self.keep = []

    def buf(self, b):
        p = ctypes.create_string_buffer(b, max(len(b), 1))
        self.keep.append(p)
        return p

    def template(self, attrs):
        arr = (_Attr * len(attrs))()
        for i, (t, v) in enumerate(attrs):
            if isinstance(v, bool):
                v = b"\x01" if v else b"\x00"
            elif isinstance(v, int):
                v = struct.pack("L", v)
            arr[i].type, arr[i].pValue, arr[i].ulValueLen = t, ctypes.cast(self.buf(v), ctypes.c_void_p), len(v)
        return arr, ctypes.c_ulong(len(attrs))

    def mech(self, m, param=None):
        mm = _Mech(m, None, 0)
        if param is not None:
            mm.pParameter, mm.ulParameterLen = ctypes.cast(self.buf(param), ctypes.c_void_p), len(param)
        self.keep.append(mm)
        return ctypes.byref(mm)

    def out(self, fn, *args, cap=None):
        """fn(h, *args, out, &len) with a buffer of cap bytes (None: NULL)."""
        n = ctypes.c_ulong(cap or 0)
        b = ctypes.create_string_buffer(cap) if cap is not None else None
        rv = fn(self.h, *args, b, ctypes.byref(n))
        return rv, n.value, (b.raw[:n.value] if b is not None and rv == CKR_OK else None)

    def aes_key_python_pkcs11(self, over=None):
        # python-pkcs11's generate_key(KeyType.AES, 128) template.
        t = {CKA_CLASS: CKO_SECRET_KEY, CKA_ID: b"", CKA_LABEL: b"", CKA_TOKEN: False, CKA_PRIVATE: True,
             CKA_SENSITIVE: True, CKA_ENCRYPT: True, CKA_DECRYPT: True, CKA_WRAP: True, CKA_UNWRAP: True,
             CKA_SIGN: True, CKA_VERIFY: True, CKA_DERIVE: False, CKA_VALUE_LEN: 16}
        t.update(over or {})
        arr, n = self.template(list(t.items()))
        k = ctypes.c_ulong()
        self.assertEqual(self.lib.C_GenerateKey(self.h, self.mech(CKM_AES_KEY_GEN), arr, n, ctypes.byref(k)), CKR_OK)
        return k

    def test_empty_id_and_label(self):
        k = self.aes_key_python_pkcs11()
        label, kid = self.session.getAttributeValue(self._obj(k), [CKA_LABEL, CKA_ID])
        self.assertEqual((label, bytes(kid)), ("", b""))

    def _obj(self, k):
        o = PyKCS11.CK_OBJECT_HANDLE(self.session)
        o.assign(k.value)
        return o

    def test_update_length_query_then_buffer_too_small(self):
        k = self.aes_key_python_pkcs11()
        iv = b"0" * 16
        parts = [b"I" * 3189, b"N" * 3284, b"T" * 10]
        self.assertEqual(self.lib.C_EncryptInit(self.h, self.mech(CKM_AES_CBC_PAD, iv), k), CKR_OK)
        ct = b""
        for part in parts:
            # python-pkcs11 asks the length with a NULL output first: the
            # input must not be consumed.
            rv, need, _ = self.out(self.lib.C_EncryptUpdate, part, ctypes.c_ulong(len(part)))
            self.assertEqual(rv, CKR_OK)
            rv, need2, _ = self.out(self.lib.C_EncryptUpdate, part, ctypes.c_ulong(len(part)), cap=5)
            self.assertEqual(rv, CKR_BUFFER_TOO_SMALL)
            self.assertGreaterEqual(need2, 16)
            rv, got, data = self.out(self.lib.C_EncryptUpdate, part, ctypes.c_ulong(len(part)), cap=max(need, need2))
            self.assertEqual(rv, CKR_OK)
            ct += data
        rv, _, _ = self.out(self.lib.C_EncryptFinal, cap=0)
        self.assertEqual(rv, CKR_BUFFER_TOO_SMALL)
        rv, _, last = self.out(self.lib.C_EncryptFinal, cap=32)
        self.assertEqual(rv, CKR_OK)
        ct += last
        self.assertEqual(bytes(self.session.decrypt(self._obj(k), ct, PyKCS11.Mechanism(CKM_AES_CBC_PAD, iv))),
                         b"".join(parts))
        # Decrypt in one Update with a too small buffer first, and a final
        # part asked with no room.
        self.assertEqual(self.lib.C_DecryptInit(self.h, self.mech(CKM_AES_CBC_PAD, iv), k), CKR_OK)
        rv, need, _ = self.out(self.lib.C_DecryptUpdate, ct, ctypes.c_ulong(len(ct)), cap=5)
        self.assertEqual(rv, CKR_BUFFER_TOO_SMALL)
        rv, _, pt = self.out(self.lib.C_DecryptUpdate, ct, ctypes.c_ulong(len(ct)), cap=need)
        self.assertEqual(rv, CKR_OK)
        rv, need, _ = self.out(self.lib.C_DecryptFinal, cap=0)
        self.assertIn(rv, (CKR_OK, CKR_BUFFER_TOO_SMALL))
        rv, _, tail = self.out(self.lib.C_DecryptFinal, cap=max(need, 16))
        self.assertEqual(rv, CKR_OK)
        self.assertEqual(pt + tail, b"".join(parts))

    def test_sign_buffer_too_small_keeps_operation(self):
        pub, priv = self.rsa_pair()
        pss = struct.pack("LLL", CKM_SHA_1, CKG_MGF1_SHA1, 20)
        for mech, param in ((CKM_RSA_PKCS, None), (CKM_SHA1_RSA_PKCS_PSS, pss)):
            with self.subTest(PyKCS11.CKM[mech]):
                self.assertEqual(self.lib.C_SignInit(self.h, self.mech(mech, param), ctypes.c_ulong(priv.value())), CKR_OK)
                rv, need, _ = self.out(self.lib.C_Sign, b"SOME DATA", ctypes.c_ulong(9), cap=16)
                self.assertEqual((rv, need), (CKR_BUFFER_TOO_SMALL, 256))
                rv, _, sig = self.out(self.lib.C_Sign, b"SOME DATA", ctypes.c_ulong(9), cap=need)
                self.assertEqual(rv, CKR_OK)
                self.assertTrue(self.session.verify(pub, b"SOME DATA", sig, PyKCS11.Mechanism(mech, param)))
        # Multi-part: C_SignFinal with too small a buffer, then again.
        self.assertEqual(self.lib.C_SignInit(self.h, self.mech(CKM_SHA512_RSA_PKCS), ctypes.c_ulong(priv.value())), CKR_OK)
        for part in (b"I" * 16, b"T" * 10):
            self.assertEqual(self.lib.C_SignUpdate(self.h, part, ctypes.c_ulong(len(part))), CKR_OK)
        rv, need, _ = self.out(self.lib.C_SignFinal, cap=16)
        self.assertEqual(rv, CKR_BUFFER_TOO_SMALL)
        rv, _, sig = self.out(self.lib.C_SignFinal, cap=need)
        self.assertEqual(rv, CKR_OK)
        self.rsa_public(pub).verify(sig, b"I" * 16 + b"T" * 10, padding.PKCS1v15(), hashes.SHA512())
        # A 4-byte signature: SIGNATURE_LEN_RANGE or SIGNATURE_INVALID
        # (python-pkcs11's verify answers False to both).
        self.assertEqual(self.lib.C_VerifyInit(self.h, self.mech(CKM_RSA_PKCS), ctypes.c_ulong(pub.value())), CKR_OK)
        rv = self.lib.C_Verify(self.h, b"00000000", ctypes.c_ulong(8), b"1234", ctypes.c_ulong(4))
        self.assertIn(rv, (CKR_SIGNATURE_LEN_RANGE, CKR_SIGNATURE_INVALID))

    def test_bulk_attributes_with_a_sensitive_one(self):
        k = self.aes_key_python_pkcs11({CKA_LABEL: b"SAMPLE KEY"})
        arr = (_Attr * 3)()
        bufs = [ctypes.create_string_buffer(64) for _ in range(3)]
        for i, t in enumerate((CKA_LABEL, CKA_VALUE, CKA_CLASS)):
            arr[i].type, arr[i].pValue, arr[i].ulValueLen = t, ctypes.cast(bufs[i], ctypes.c_void_p), 64
        self.assertEqual(self.lib.C_GetAttributeValue(self.h, k, arr, ctypes.c_ulong(3)), CKR_ATTRIBUTE_SENSITIVE)
        unavailable = ctypes.c_ulong(-1).value
        self.assertEqual([a.ulValueLen for a in arr], [10, unavailable, struct.calcsize("L")])
        self.assertEqual(bufs[0].raw[:10], b"SAMPLE KEY")
        self.assertEqual(struct.unpack("L", bufs[2].raw[:struct.calcsize("L")])[0], CKO_SECRET_KEY)
        for i, t in enumerate((CKA_VALUE, CKA_CERTIFICATE_TYPE)):
            arr[i].type, arr[i].pValue = t, None
        rv = self.lib.C_GetAttributeValue(self.h, k, arr, ctypes.c_ulong(2))
        self.assertIn(rv, (CKR_ATTRIBUTE_SENSITIVE, CKR_ATTRIBUTE_TYPE_INVALID))
        self.assertEqual([arr[0].ulValueLen, arr[1].ulValueLen], [unavailable, unavailable])

    def test_find_in_batches(self):
        for i in range(12):
            self.session.createObject([(CKA_CLASS, CKO_DATA), (CKA_TOKEN, CK_FALSE), (CKA_LABEL, "py-batch")])
        t, n = self.template([(CKA_LABEL, b"py-batch")])
        self.assertEqual(self.lib.C_FindObjectsInit(self.h, t, n), CKR_OK)
        got, counts = set(), []
        while True:
            objs, c = (ctypes.c_ulong * 10)(), ctypes.c_ulong()
            self.assertEqual(self.lib.C_FindObjects(self.h, objs, ctypes.c_ulong(10), ctypes.byref(c)), CKR_OK)
            counts.append(c.value)
            if c.value == 0:
                break
            got.update(objs[:c.value])
        self.assertEqual(self.lib.C_FindObjectsFinal(self.h), CKR_OK)
        self.assertEqual((len(got), counts), (12, [10, 2, 0]))

    def test_digest_key_and_seed(self):
        k = self.aes_key_python_pkcs11({CKA_SENSITIVE: False, CKA_EXTRACTABLE: True})
        (value,) = self.session.getAttributeValue(self._obj(k), [CKA_VALUE])
        self.assertEqual(self.lib.C_DigestInit(self.h, self.mech(CKM_SHA256)), CKR_OK)
        self.assertEqual(self.lib.C_DigestUpdate(self.h, b"Some data", ctypes.c_ulong(9)), CKR_OK)
        self.assertEqual(self.lib.C_DigestKey(self.h, k), CKR_OK)
        rv, _, d = self.out(self.lib.C_DigestFinal, cap=32)
        self.assertEqual(rv, CKR_OK)
        self.assertEqual(d, hashlib.sha256(b"Some data" + bytes(value)).digest())
        # python-pkcs11's test_seed_random expects C_SeedRandom to succeed.
        self.assertEqual(self.lib.C_SeedRandom(self.h, b"12345678", ctypes.c_ulong(8)), CKR_OK)

    def derive_by_encryption(self, base, mech, param, value_len):
        # python-pkcs11's derive_key(KeyType.AES, bits, template={SENSITIVE:
        # False, EXTRACTABLE: True}) template.
        t = {CKA_CLASS: CKO_SECRET_KEY, CKA_KEY_TYPE: CKK_AES, CKA_ID: b"", CKA_LABEL: b"", CKA_TOKEN: False,
             CKA_PRIVATE: True, CKA_SENSITIVE: False, CKA_EXTRACTABLE: True, CKA_ENCRYPT: True, CKA_DECRYPT: True,
             CKA_WRAP: True, CKA_UNWRAP: True, CKA_SIGN: True, CKA_VERIFY: True, CKA_DERIVE: True,
             CKA_VALUE_LEN: value_len}
        arr, n = self.template(list(t.items()))
        k = ctypes.c_ulong()
        rv = self.lib.C_DeriveKey(self.h, self.mech(mech, param), base, arr, n, ctypes.byref(k))
        if rv != CKR_OK:
            return rv, None
        (v,) = self.session.getAttributeValue(self._obj(k), [CKA_VALUE])
        return rv, bytes(v)

    def test_aes_derive_by_encryption(self):
        # python-pkcs11's test_aes: CKM_AES_ECB_ENCRYPT_DATA with
        # CK_KEY_DERIVATION_STRING_DATA, CKM_AES_CBC_ENCRYPT_DATA with
        # CK_AES_CBC_ENCRYPT_DATA_PARAMS; a refusal must be
        # CKR_MECHANISM_PARAM_INVALID or CKR_FUNCTION_FAILED.
        self.need("CKM_AES_ECB_ENCRYPT_DATA", "CKM_AES_CBC_ENCRYPT_DATA")
        ok_rvs = (CKR_MECHANISM_PARAM_INVALID, CKR_FUNCTION_FAILED)
        for bits in (128, 256):
            value = bytes(range(bits // 8))
            base = self.aes_key(value, [(CKA_DERIVE, CK_TRUE)])
            bh = ctypes.c_ulong(base.value())
            for n in (16, 32, 15, 31):
                data = bytes(range(7, 7 + n))
                buf = self.buf(data)
                param = struct.pack("PL", ctypes.addressof(buf), n)
                rv, got = self.derive_by_encryption(bh, CKM_AES_ECB_ENCRYPT_DATA, param, bits // 8)
                with self.subTest(mech="ECB", bits=bits, n=n):
                    if n % 16 or n < bits // 8:
                        self.assertIn(rv, ok_rvs)
                    else:
                        e = Cipher(algorithms.AES(value), modes.ECB()).encryptor()
                        self.assertEqual(got, (e.update(data) + e.finalize())[:bits // 8])
            for n in (16, 32, 64, 31):
                data, iv = bytes(range(3, 3 + n)), b"0" * 16
                buf = self.buf(data)
                param = iv + struct.pack("PL", ctypes.addressof(buf), n)
                rv, got = self.derive_by_encryption(bh, CKM_AES_CBC_ENCRYPT_DATA, param, bits // 8)
                with self.subTest(mech="CBC", bits=bits, n=n):
                    if n % 16 or n < bits // 8:
                        self.assertIn(rv, ok_rvs)
                    else:
                        e = Cipher(algorithms.AES(value), modes.CBC(iv)).encryptor()
                        self.assertEqual(got, (e.update(data) + e.finalize())[:bits // 8])

    def test_verify_with_512_bit_rsa_key(self):
        # python-pkcs11's test_x509 verifies an old certificate made with a
        # 512-bit RSA key (CKM_SHA1_RSA_PKCS); signing still needs 1024 bits.
        k = rsa.generate_private_key(65537, 512)
        n = k.public_key().public_numbers()
        pub = self.session.createObject([(CKA_CLASS, CKO_PUBLIC_KEY), (CKA_KEY_TYPE, CKK_RSA), (CKA_TOKEN, CK_FALSE),
                                         (CKA_MODULUS, n.n.to_bytes(64, "big")), (CKA_PUBLIC_EXPONENT, b"\x01\x00\x01")])
        tbs = b"tbsCertificate" * 9
        sig = k.sign(tbs, padding.PKCS1v15(), hashes.SHA1())
        self.assertTrue(self.session.verify(pub, tbs, sig, PyKCS11.Mechanism(CKM_SHA1_RSA_PKCS)))
        self.assertFalse(self.session.verify(pub, tbs + b"!", sig, PyKCS11.Mechanism(CKM_SHA1_RSA_PKCS)))

    def test_so_login_on_rw_session(self):
        # token.open(rw=True, so_pin=...) with no other session open.
        self.session.logout()
        self.session.closeSession()
        s = pkcs11.openSession(SLOT, CKF_SERIAL_SESSION | CKF_RW_SESSION)
        try:
            s.login(os.environ["PYKCS11SOPIN"], CKU_SO)
            self.assertEqual(s.getSessionInfo().state, CKS_RW_SO_FUNCTIONS)
            s.logout()
        finally:
            s.closeSession()
        self.session = pkcs11.openSession(SLOT, CKF_SERIAL_SESSION | CKF_RW_SESSION)
        self.session.login(PIN)


class Recorder(unittest.TextTestResult):
    """Keeps one outcome per test for the Go side."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.outcomes = {}

    def _name(self, test):
        return "%s.%s" % (type(test).__name__, test._testMethodName) if hasattr(test, "_testMethodName") else str(test)

    def addSuccess(self, test):
        super().addSuccess(test)
        self.outcomes[self._name(test)] = "pass"

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.outcomes[self._name(test)] = "fail"

    def addError(self, test, err):
        super().addError(test, err)
        self.outcomes[self._name(test)] = "error"

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            failed = issubclass(err[0], test.failureException)
            self.outcomes[self._name(test)] = "fail" if failed else "error"

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self.outcomes[self._name(test)] = "skip"


if __name__ == "__main__":
    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__])
    runner = unittest.TextTestRunner(stream=sys.stderr, verbosity=2, resultclass=Recorder)
    result = runner.run(suite)
    with open(os.environ["PYKCS11RESULTS"], "w") as f:
        json.dump(result.outcomes, f, indent=1, sort_keys=True)
    sys.exit(0)
