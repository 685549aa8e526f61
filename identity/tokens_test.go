package identity_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/store/storetest"
)

// writeJWKS writes the public half of key as a JWKS file and returns its path.
func writeJWKS(t *testing.T, key *rsa.PrivateKey, kid string) string {
	t.Helper()
	b64 := base64.RawURLEncoding
	doc := map[string]any{"keys": []any{map[string]any{"kty": "RSA", "use": "sig", "alg": "RS256", "kid": kid,
		"n": b64.EncodeToString(key.N.Bytes()), "e": b64.EncodeToString(big.NewInt(int64(key.E)).Bytes())}}}
	raw, err := json.Marshal(doc)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "jwks.json")
	require.NoError(t, os.WriteFile(path, raw, 0o600))
	return path
}

// Person tokens from the identity provider and organization tokens from the token provider come from
// different issuers with different keys; each token is checked against its own issuer's keys.
func TestSeveralTrustedIssuers(t *testing.T) {
	const aud = "mailbox-api"
	certs := filepath.Join(filepath.Dir(storetest.DemoDataset()), "certs")
	demo, err := identity.LoadMinter(filepath.Join(certs, "issuer-key.pem"), "demo-1", "https://test-issuer.demo.local", aud)
	require.NoError(t, err)
	keyB, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	providerB := &identity.Minter{Key: keyB, KeyID: "b-1", Issuer: "https://tokens.example", Audience: aud}

	v, err := identity.NewTokenVerifier(context.Background(), aud,
		identity.TrustedIssuer{Issuer: demo.Issuer, JWKS: filepath.Join(certs, "jwks.json")},
		identity.TrustedIssuer{Issuer: providerB.Issuer, JWKS: writeJWKS(t, keyB, "b-1")})
	require.NoError(t, err)

	person, err := demo.Mint(identity.TokenRequest{PID: "12857812326", Scope: "platform:enduser"})
	require.NoError(t, err)
	c, err := v.Verify(person)
	require.NoError(t, err)
	assert.Equal(t, "12857812326", c.PID)

	org, err := providerB.Mint(identity.TokenRequest{Org: "310900028", Scope: "platform:serviceowner"})
	require.NoError(t, err)
	c, err = v.Verify(org)
	require.NoError(t, err)
	assert.Equal(t, "0192:310900028", c.Consumer.ID)

	// A token naming issuer B but signed with the demo key is refused: keys are per issuer.
	forged := &identity.Minter{Key: demo.Key, KeyID: "b-1", Issuer: providerB.Issuer, Audience: aud}
	tok, err := forged.Mint(identity.TokenRequest{Org: "310900028"})
	require.NoError(t, err)
	_, err = v.Verify(tok)
	var te *identity.TokenError
	require.ErrorAs(t, err, &te)
	assert.Contains(t, te.Reason, "signature")

	stranger := &identity.Minter{Key: keyB, KeyID: "b-1", Issuer: "https://elsewhere.example", Audience: aud}
	tok, err = stranger.Mint(identity.TokenRequest{Org: "310900028"})
	require.NoError(t, err)
	_, err = v.Verify(tok)
	require.ErrorAs(t, err, &te)
	assert.Contains(t, te.Reason, "issuer is not trusted")
}

// Tokens the JWT library would accept but the RFCs refuse: a crit header (no extension is understood
// here) and times that are strings rather than JSON numbers. Each is signed with a trusted key, so only
// its form is wrong.
func TestTokenStrictForm(t *testing.T) {
	const aud = "mailbox-api"
	certs := filepath.Join(filepath.Dir(storetest.DemoDataset()), "certs")
	demo, err := identity.LoadMinter(filepath.Join(certs, "issuer-key.pem"), "demo-1", "https://test-issuer.demo.local", aud)
	require.NoError(t, err)
	v, err := identity.NewTokenVerifier(context.Background(), aud,
		identity.TrustedIssuer{Issuer: demo.Issuer, JWKS: filepath.Join(certs, "jwks.json")})
	require.NoError(t, err)
	now := time.Now().Unix()
	sign := func(claims jwt.MapClaims, header map[string]any) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
		tok.Header["kid"] = demo.KeyID
		for k, val := range header {
			tok.Header[k] = val
		}
		raw, err := tok.SignedString(demo.Key)
		require.NoError(t, err)
		return raw
	}
	claims := func(change func(jwt.MapClaims)) jwt.MapClaims {
		c := jwt.MapClaims{"iss": demo.Issuer, "aud": aud, "pid": "12857812326", "iat": now, "nbf": now, "exp": now + 3600}
		if change != nil {
			change(c)
		}
		return c
	}
	_, err = v.Verify(sign(claims(nil), nil))
	require.NoError(t, err, "the well-formed token is accepted")

	for _, tc := range []struct {
		name   string
		token  string
		reason string
	}{
		{"crit header", sign(claims(nil), map[string]any{"crit": []string{"exp"}}), "crit"},
		{"empty crit header", sign(claims(nil), map[string]any{"crit": []string{}}), "crit"},
		{"exp as a string", sign(claims(func(c jwt.MapClaims) { c["exp"] = strconv.FormatInt(now+3600, 10) }), nil), "exp is not a number"},
		{"nbf as a string", sign(claims(func(c jwt.MapClaims) { c["nbf"] = strconv.FormatInt(now, 10) }), nil), "nbf is not a number"},
		{"iat as a string", sign(claims(func(c jwt.MapClaims) { c["iat"] = strconv.FormatInt(now, 10) }), nil), "iat is not a number"},
		{"exp as a boolean", sign(claims(func(c jwt.MapClaims) { c["exp"] = true }), nil), "exp is not a number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := v.Verify(tc.token)
			var te *identity.TokenError
			require.ErrorAs(t, err, &te)
			assert.Contains(t, te.Reason, tc.reason)
		})
	}
}
