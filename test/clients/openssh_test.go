package clients

import (
	"crypto"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

// authorizedKey is the OpenSSH one-line form ("type base64") of pub.
func authorizedKey(t *testing.T, pub crypto.PublicKey) string {
	t.Helper()
	k, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatalf("ssh public key: %v", err)
	}
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k)))
}

// containsKey reports whether one line of out starts with key ("type
// base64", the comment after it being free).
func containsKey(out, key string) bool {
	for _, line := range strings.Split(out, "\n") {
		if line == key || strings.HasPrefix(line, key+" ") {
			return true
		}
	}
	return false
}

// TestOpenSSH drives OpenSSH: ssh-keygen -D prints the token's public
// keys; ssh-agent, allowed to load the module with -P, gets it from
// ssh-add -s (PIN through SSH_ASKPASS), and a signature made through the
// agent by ssh-keygen -Y sign verifies with ssh-keygen -Y verify. The agent
// listens on a socket in the test's directory and is killed at the end.
func TestOpenSSH(t *testing.T) {
	t.Parallel()
	needTools(t, "ssh-keygen", "ssh-agent", "ssh-add")
	tk := newToken(t)
	tk.genRSA("01", "ssh-rsa", 2048)
	_, rsaPub := tk.publicKey("01")
	rsaKey := authorizedKey(t, rsaPub)

	// ssh-agent matches -P patterns against the real path of the module.
	real, err := filepath.EvalSymlinks(tk.module)
	if err != nil {
		t.Fatal(err)
	}
	sock := tk.path("agent.sock")
	tk.startServer(nil, "SSH_AUTH_SOCK=", "ssh-agent", "-D", "-a", sock, "-P", real)
	askpass := tk.write("askpass.sh", "#!/bin/sh\ncat "+tk.pinFile+"\n")
	if err := os.Chmod(askpass, 0o700); err != nil {
		t.Fatal(err)
	}
	agentEnv := []string{"SSH_AUTH_SOCK=" + sock, "SSH_ASKPASS=" + askpass, "SSH_ASKPASS_REQUIRE=force"}
	addModule := func(tk *testToken) {
		tk.t.Helper()
		r := tk.mustRunEnv(agentEnv, "ssh-add", "-s", tk.module)
		if !strings.Contains(r.combined(), "Card added") {
			tk.t.Fatalf("ssh-add -s: %s", r.combined())
		}
	}
	// signVerify signs a file through the agent with the key and verifies
	// the signature, then checks that a changed file fails.
	signVerify := func(tk *testToken, key, name string) {
		tk.t.Helper()
		pubFile := tk.write(name+".pub", key+"\n")
		msg := tk.write(name+".txt", "signed by the token through ssh-agent\n")
		tk.mustRunEnv(agentEnv, "ssh-keygen", "-Y", "sign", "-U", "-f", pubFile, "-n", "file", msg)
		allowed := tk.write(name+".allowed", "tester@example "+key+"\n")
		r := tk.runEnv(nil, tk.read(name+".txt"), "ssh-keygen", "-Y", "verify", "-f", allowed, "-I", "tester@example",
			"-n", "file", "-s", msg+".sig")
		if r.err != nil || !strings.Contains(r.combined(), `Good "file" signature for tester@example`) {
			tk.t.Fatalf("ssh-keygen -Y verify: %v\n%s", r.err, r.combined())
		}
		r = tk.runEnv(nil, []byte("something else\n"), "ssh-keygen", "-Y", "verify", "-f", allowed, "-I", "tester@example",
			"-n", "file", "-s", msg+".sig")
		if r.err == nil {
			tk.t.Fatalf("ssh-keygen -Y verify accepted the signature over other data:\n%s", r.combined())
		}
	}

	t.Run("ssh-keygen-D", func(t *testing.T) {
		tk := tk.with(t)
		r := tk.mustRun("ssh-keygen", "-D", tk.module)
		if !containsKey(r.stdout, rsaKey) {
			t.Fatalf("ssh-keygen -D does not print the token's RSA key %q:\n%s", rsaKey, r.combined())
		}
	})

	t.Run("agent-rsa", func(t *testing.T) {
		tk := tk.with(t)
		addModule(tk)
		if r := tk.mustRunEnv(agentEnv, "ssh-add", "-L"); !containsKey(r.stdout, rsaKey) {
			t.Fatalf("ssh-add -L does not list the token key:\n%s", r.combined())
		}
		signVerify(tk, rsaKey, "rsa")
	})

	t.Run("agent-ecdsa", func(t *testing.T) {
		tk := tk.with(t)
		tk.requireECDSA()
		tk.genEC("02", "ssh-ec", "prime256v1")
		_, ecPub := tk.publicKey("02")
		ecKey := authorizedKey(t, ecPub)
		if r := tk.mustRun("ssh-keygen", "-D", tk.module); !containsKey(r.stdout, ecKey) {
			t.Fatalf("ssh-keygen -D does not print the token's ECDSA key %q:\n%s", ecKey, r.combined())
		}
		// Reload the module so that the agent sees the new key.
		tk.runEnv(agentEnv, nil, "ssh-add", "-e", tk.module)
		addModule(tk)
		if r := tk.mustRunEnv(agentEnv, "ssh-add", "-L"); !containsKey(r.stdout, ecKey) {
			t.Fatalf("ssh-add -L does not list the token's ECDSA key:\n%s", r.combined())
		}
		signVerify(tk, ecKey, "ec")
	})
}
