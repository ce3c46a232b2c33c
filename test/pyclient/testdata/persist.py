"""A second process finds the token RSA key test_pykcs11.py made and signs.

Same environment as test_pykcs11.py; prints "ok" when the key survived the
first process and its signature verifies with python3-cryptography.
"""

import os

import PyKCS11
from PyKCS11.LowLevel import *  # noqa: F401,F403

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

lib = PyKCS11.PyKCS11Lib()
lib.load(os.environ["PYKCS11LIB"])
slot = [s for s in lib.getSlotList(tokenPresent=True)
        if lib.getTokenInfo(s).label.strip() == os.environ["PYKCS11TOKEN"]][0]
s = lib.openSession(slot)
s.login(os.environ["PYKCS11PIN"])
(priv,) = s.findObjects([(CKA_CLASS, CKO_PRIVATE_KEY), (CKA_LABEL, "py-rsa")])
(pub,) = s.findObjects([(CKA_CLASS, CKO_PUBLIC_KEY), (CKA_ID, b"\x01")])
n, e = s.getAttributeValue(pub, [CKA_MODULUS, CKA_PUBLIC_EXPONENT])
key = rsa.RSAPublicNumbers(int.from_bytes(bytes(e), "big"), int.from_bytes(bytes(n), "big")).public_key()
sig = bytes(s.sign(priv, b"persist", PyKCS11.Mechanism(CKM_SHA256_RSA_PKCS)))
key.verify(sig, b"persist", padding.PKCS1v15(), hashes.SHA256())
s.logout()
s.closeSession()
print("ok")
