package webhook

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/postbox/postbox/config"
)

// Subscription secrets are stored sealed, never in plaintext: envelope encryption, each secret under a
// fresh data key (AES-256-GCM), the data key wrapped by a key-encryption key from configuration
// (POSTBOX_WEBHOOK_SEAL_KEYS). Several keys are accepted for opening, the first (newest) seals: rotating
// the key is adding a new one in front, then `postbox reseal` (Reseal) and, once done, dropping the old
// one. A sealed secret reads
//
//	sealed:v1:<key id>:<base64 of nonce and wrapped data key>:<base64 of nonce and sealed secret>
//
// and what is sealed names its key id, so the database alone, a backup or a replica, opens nothing.
const sealedPrefix = "sealed:v1:"

// Sealer seals and opens subscription secrets.
type Sealer struct {
	keys    map[string]cipher.AEAD
	current string
}

// NewSealer returns a sealer over the key-encryption keys, the first of which seals.
func NewSealer(keys []config.SealKey) (*Sealer, error) {
	if len(keys) == 0 {
		return nil, errors.New("webhook: no key to seal subscription secrets with")
	}
	s := &Sealer{keys: map[string]cipher.AEAD{}, current: keys[0].ID}
	for _, k := range keys {
		aead, err := newAEAD(k.Key)
		if err != nil {
			return nil, fmt.Errorf("webhook: seal key %s: %w", k.ID, err)
		}
		s.keys[k.ID] = aead
	}
	return s, nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// seal encrypts plain with aead under a fresh nonce, bound to what it is (additional data).
func seal(aead cipher.AEAD, plain, what []byte) []byte {
	nonce := make([]byte, aead.NonceSize())
	_, _ = rand.Read(nonce) // never fails (crypto/rand)
	return aead.Seal(nonce, nonce, plain, what)
}

func open(aead cipher.AEAD, sealed, what []byte) ([]byte, error) {
	if len(sealed) < aead.NonceSize() {
		return nil, errors.New("too short")
	}
	return aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], what)
}

// DemoSealer is the sealer of the demo key (config.DemoSealKey), for make run and the tests.
func DemoSealer() *Sealer {
	id, b64, _ := strings.Cut(config.DemoSealKey, ":")
	key, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		panic(err) // a constant
	}
	s, err := NewSealer([]config.SealKey{{ID: id, Key: key}})
	if err != nil {
		panic(err)
	}
	return s
}

// Seal seals a secret with the newest key.
func (s *Sealer) Seal(secret string) (string, error) {
	dataKey := make([]byte, 32)
	_, _ = rand.Read(dataKey)
	data, err := newAEAD(dataKey)
	if err != nil {
		return "", err
	}
	wrapped := seal(s.keys[s.current], dataKey, []byte(s.current))
	sealed := seal(data, []byte(secret), []byte(sealedPrefix))
	enc := base64.RawURLEncoding.EncodeToString
	return sealedPrefix + s.current + ":" + enc(wrapped) + ":" + enc(sealed), nil
}

// Open opens a sealed secret; an error when it is not sealed, its key is not configured or it was
// altered.
func (s *Sealer) Open(sealed string) (string, error) {
	parts := strings.Split(strings.TrimPrefix(sealed, sealedPrefix), ":")
	if !strings.HasPrefix(sealed, sealedPrefix) || len(parts) != 3 {
		return "", errors.New("webhook: the subscription's secret is not sealed")
	}
	kek, ok := s.keys[parts[0]]
	if !ok {
		return "", fmt.Errorf("webhook: the subscription's secret is sealed with key %q, which POSTBOX_WEBHOOK_SEAL_KEYS does not hold", parts[0])
	}
	wrapped, err1 := base64.RawURLEncoding.DecodeString(parts[1])
	body, err2 := base64.RawURLEncoding.DecodeString(parts[2])
	if err1 != nil || err2 != nil {
		return "", errors.New("webhook: the subscription's sealed secret is malformed")
	}
	dataKey, err := open(kek, wrapped, []byte(parts[0]))
	if err != nil {
		return "", errors.New("webhook: the subscription's secret does not open with its key")
	}
	data, err := newAEAD(dataKey)
	if err != nil {
		return "", err
	}
	plain, err := open(data, body, []byte(sealedPrefix))
	if err != nil {
		return "", errors.New("webhook: the subscription's secret does not open with its key")
	}
	return string(plain), nil
}

// Current tells whether a sealed secret is sealed with the newest key.
func (s *Sealer) Current(sealed string) bool {
	return strings.HasPrefix(sealed, sealedPrefix+s.current+":")
}

// Reseal seals every stored secret that is not sealed with the newest key (one in plaintext, from before
// secrets were sealed, or one under an older key) with the newest, and returns how many it changed. The
// API and the workers run it at start; `postbox reseal` runs it after a key rotation.
func Reseal(ctx context.Context, st Store, s *Sealer) (int, error) {
	stored, err := st.SubscriptionSecrets(ctx)
	if err != nil {
		return 0, err
	}
	changed := 0
	for _, sec := range stored {
		next, ok, err := s.reseal(sec.Secret)
		if err != nil {
			return changed, fmt.Errorf("subscription %d: %w", sec.ID, err)
		}
		prev, prevOK, err := s.reseal(sec.PreviousSecret)
		if err != nil {
			return changed, fmt.Errorf("subscription %d: %w", sec.ID, err)
		}
		if ok && prevOK {
			continue
		}
		done, err := st.ReplaceSubscriptionSecrets(ctx, sec, next, prev)
		if err != nil {
			return changed, err
		}
		if done {
			changed++
		}
	}
	return changed, nil
}

// reseal is secret sealed with the newest key, and whether it already was ("" stays "").
func (s *Sealer) reseal(secret string) (string, bool, error) {
	if secret == "" || s.Current(secret) {
		return secret, true, nil
	}
	plain := secret
	if strings.HasPrefix(secret, sealedPrefix) {
		var err error
		if plain, err = s.Open(secret); err != nil {
			return "", false, err
		}
	}
	sealed, err := s.Seal(plain)
	return sealed, false, err
}
