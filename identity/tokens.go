package identity

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
)

// TokenError says why a bearer token was refused; its text is safe to return to the client.
type TokenError struct{ Reason string }

func (e *TokenError) Error() string { return "invalid token: " + e.Reason }

// Claims are the claims of person and organization tokens.
type Claims struct {
	jwt.RegisteredClaims
	PID      string    `json:"pid,omitempty"`
	ACR      string    `json:"acr,omitempty"`
	Scope    string    `json:"scope,omitempty"`
	ClientID string    `json:"client_id,omitempty"`
	Consumer *Consumer `json:"consumer,omitempty"`
}

// Consumer identifies the organization of a machine-to-machine token, as "0192:<orgnr>".
type Consumer struct {
	Authority string `json:"authority"`
	ID        string `json:"ID"`
}

func (c Claims) securityLevel() int {
	if n, err := strconv.Atoi(strings.TrimPrefix(c.ACR, "Level")); err == nil && strings.HasPrefix(c.ACR, "Level") && n >= 0 && n <= 4 {
		return n
	}
	return 0
}

func (c Claims) organizationNumber() string {
	if c.Consumer == nil {
		return ""
	}
	_, num, _ := strings.Cut(c.Consumer.ID, ":")
	return num
}

// TrustedIssuer is a token issuer the service accepts, with where its signing keys are: an https:// or
// http:// URL (fetched, cached and refreshed, so key rotation works) or a local file.
type TrustedIssuer struct {
	Issuer string
	JWKS   string
}

// TokenVerifier checks bearer tokens of the trusted issuers (for example the identity provider's person
// tokens and the token provider's organization tokens): signature against the issuer's own JWKS, iss, aud,
// exp/nbf with a small clock skew, and an algorithm allow-list.
type TokenVerifier struct {
	audience string
	keys     map[string]keyfunc.Keyfunc // by issuer
}

// AllowedAlgorithms are the signature algorithms tokens may use; "none" and HMAC never are.
var AllowedAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "ES256", "ES384"}

// ClockSkew is how far token times may be off.
const ClockSkew = 30 * time.Second

// NewTokenVerifier trusts tokens for audience from each of the issuers.
func NewTokenVerifier(ctx context.Context, audience string, issuers ...TrustedIssuer) (*TokenVerifier, error) {
	v := &TokenVerifier{audience: audience, keys: map[string]keyfunc.Keyfunc{}}
	for _, is := range issuers {
		var (
			keys keyfunc.Keyfunc
			err  error
		)
		if strings.HasPrefix(is.JWKS, "https://") || strings.HasPrefix(is.JWKS, "http://") {
			keys, err = keyfunc.NewDefaultCtx(ctx, []string{is.JWKS})
		} else {
			var raw []byte
			if raw, err = os.ReadFile(is.JWKS); err == nil {
				keys, err = keyfunc.NewJWKSetJSON(json.RawMessage(raw))
			}
		}
		if err != nil {
			return nil, fmt.Errorf("keys of token issuer %s (%s): %w", is.Issuer, is.JWKS, err)
		}
		v.keys[is.Issuer] = keys
	}
	return v, nil
}

// Verify checks a token and returns its claims. A token is either a person's (pid) or an
// organization's (consumer); anything else is refused.
func (v *TokenVerifier) Verify(raw string) (Claims, error) {
	// The issuer picks the keys; it is checked again, with the signature, below.
	unverified := jwt.MapClaims{}
	token, _, err := jwt.NewParser().ParseUnverified(raw, unverified)
	if err != nil {
		return Claims{}, &TokenError{Reason: tokenReason(err)}
	}
	if err := checkStrictForm(token.Header, unverified); err != nil {
		return Claims{}, err
	}
	issuer, _ := unverified["iss"].(string)
	keys, ok := v.keys[issuer]
	if !ok {
		return Claims{}, &TokenError{Reason: tokenReason(jwt.ErrTokenInvalidIssuer)}
	}
	var c Claims
	_, err = jwt.ParseWithClaims(raw, &c, keys.Keyfunc,
		jwt.WithValidMethods(AllowedAlgorithms),
		jwt.WithIssuer(issuer),
		jwt.WithAudience(v.audience),
		jwt.WithLeeway(ClockSkew),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
	)
	if err != nil {
		return Claims{}, &TokenError{Reason: tokenReason(err)}
	}
	if (c.PID == "") == (c.organizationNumber() == "") {
		return Claims{}, &TokenError{Reason: "the token names neither a person (pid) nor an organization (consumer)"}
	}
	return c, nil
}

// checkStrictForm refuses what the JWT library would let through but the RFCs do not: a crit header
// (RFC 7515 §4.1.11: a token whose critical extensions are not understood must be refused, and this
// service understands none), and times that are not JSON numbers (RFC 7519 NumericDate: the library
// reads "1700000000", a string, as a time).
func checkStrictForm(header map[string]any, claims jwt.MapClaims) error {
	if _, ok := header["crit"]; ok {
		return &TokenError{Reason: "the token's header has a crit parameter, and no extension is understood here"}
	}
	for _, name := range []string{"exp", "nbf", "iat"} {
		if v, ok := claims[name]; ok {
			if _, number := v.(float64); !number {
				return &TokenError{Reason: fmt.Sprintf("the token's %s is not a number of seconds (RFC 7519 NumericDate)", name)}
			}
		}
	}
	return nil
}

func tokenReason(err error) string {
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		return "the token has expired"
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return "the token is not valid yet"
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return "the token's issuer is not trusted"
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return "the token is not meant for this service"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrTokenUnverifiable):
		return "the token's signature cannot be verified"
	case errors.Is(err, jwt.ErrTokenMalformed):
		return "the token is malformed"
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return "the token lacks a required claim"
	}
	return "the token is not acceptable"
}

// Minter signs tokens like the test issuer does, for `postbox token` and for tests.
type Minter struct {
	Key      *rsa.PrivateKey
	KeyID    string
	Issuer   string
	Audience string
}

// LoadMinter reads a PEM private key (PKCS#8 or PKCS#1 RSA).
func LoadMinter(keyFile, keyID, issuer, audience string) (*Minter, error) {
	raw, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(raw)
	if block == nil {
		return nil, fmt.Errorf("%s holds no PEM key", keyFile)
	}
	var key *rsa.PrivateKey
	if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("%s is not an RSA key", keyFile)
		}
		key = rk
	} else if key, err = x509.ParsePKCS1PrivateKey(block.Bytes); err != nil {
		return nil, fmt.Errorf("%s: %w", keyFile, err)
	}
	return &Minter{Key: key, KeyID: keyID, Issuer: issuer, Audience: audience}, nil
}

// TokenRequest describes a token to mint: a person's (PID, ACR) or an organization's (Org).
type TokenRequest struct {
	PID   string
	ACR   string // default Level3
	Org   string
	Scope string
	TTL   time.Duration // default one hour
}

// Mint signs a token for r with RS256.
func (m *Minter) Mint(r TokenRequest) (string, error) {
	now := time.Now()
	ttl := r.TTL
	if ttl == 0 {
		ttl = time.Hour
	}
	jti := make([]byte, 16)
	if _, err := rand.Read(jti); err != nil {
		return "", err
	}
	c := Claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer: m.Issuer, Audience: jwt.ClaimStrings{m.Audience}, ID: hex.EncodeToString(jti),
			IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
		},
		Scope: r.Scope,
	}
	switch {
	case r.PID != "" && r.Org == "":
		c.PID, c.ACR, c.ClientID = r.PID, r.ACR, "demo-client"
		if c.ACR == "" {
			c.ACR = "Level3"
		}
	case r.Org != "" && r.PID == "":
		c.Consumer = &Consumer{Authority: "iso6523-actorid-upis", ID: "0192:" + r.Org}
		c.ClientID = "demo-" + r.Org
	default:
		return "", errors.New("a token is for either a person (--pid) or an organization (--org)")
	}
	t := jwt.NewWithClaims(jwt.SigningMethodRS256, c)
	t.Header["kid"] = m.KeyID
	return t.SignedString(m.Key)
}
