// Package webhook pushes the outbox's CloudEvents to subscribed endpoints: Standard Webhooks signatures,
// the CloudEvents abuse-protection handshake, a guard against server-side request forgery, and the delivery
// workflow with its activities on the events task queue.
package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The headers of a signed delivery (Standard Webhooks): the event's id, the time of the attempt in Unix
// seconds, and "v1," + the base64 HMAC-SHA256 of "id.timestamp.body" under the subscription's secret.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// secretPrefix starts every secret: "whsec_" + the base64 of the key, as Standard Webhooks libraries take it.
const secretPrefix = "whsec_"

// NewSecret returns a fresh secret of 32 random bytes.
func NewSecret() string {
	key := make([]byte, 32)
	_, _ = rand.Read(key) // never fails (crypto/rand)
	return secretPrefix + base64.StdEncoding.EncodeToString(key)
}

// secretKey is the HMAC key of a secret: the base64 after "whsec_".
func secretKey(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, secretPrefix))
	if err != nil || len(key) == 0 {
		return nil, errors.New("the secret is not whsec_ and base64")
	}
	return key, nil
}

// Sign returns the webhook-signature of body sent as id at timestamp (Unix seconds).
func Sign(secret, id string, timestamp int64, body []byte) (string, error) {
	key, err := secretKey(secret)
	if err != nil {
		return "", err
	}
	return "v1," + base64.StdEncoding.EncodeToString(mac(key, id, timestamp, body)), nil
}

func mac(key []byte, id string, timestamp int64, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "%s.%d.", id, timestamp)
	m.Write(body)
	return m.Sum(nil)
}

// SignHeaders sets the three webhook headers of a delivery of body as id at now, signed with each of the
// secrets (space-separated, as Standard Webhooks has it: during a rotation the new and the previous
// secret both sign, and a receiver that knows either verifies).
func SignHeaders(h http.Header, secrets []string, id string, now time.Time, body []byte) error {
	sigs := make([]string, len(secrets))
	for i, secret := range secrets {
		var err error
		if sigs[i], err = Sign(secret, id, now.Unix(), body); err != nil {
			return err
		}
	}
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	h.Set(HeaderSignature, strings.Join(sigs, " "))
	return nil
}

// Tolerance is how far a receiver should let webhook-timestamp be from its clock (the specification's
// suggestion), against replays of an old delivery.
const Tolerance = 5 * time.Minute

// Verify checks the webhook headers of a delivery as a receiver does: the timestamp within Tolerance of
// now and one of the space-separated v1 signatures matching.
func Verify(secret string, h http.Header, body []byte, now time.Time) error {
	key, err := secretKey(secret)
	if err != nil {
		return err
	}
	id, sigs := h.Get(HeaderID), h.Get(HeaderSignature)
	ts, err := strconv.ParseInt(h.Get(HeaderTimestamp), 10, 64)
	if id == "" || sigs == "" || err != nil {
		return errors.New("webhook-id, webhook-timestamp or webhook-signature missing or malformed")
	}
	if d := now.Sub(time.Unix(ts, 0)); d > Tolerance || d < -Tolerance {
		return fmt.Errorf("webhook-timestamp is %s off the clock", d.Round(time.Second))
	}
	want := mac(key, id, ts, body)
	for _, s := range strings.Fields(sigs) {
		v, sig, ok := strings.Cut(s, ",")
		if !ok || v != "v1" {
			continue
		}
		if got, err := base64.StdEncoding.DecodeString(sig); err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return errors.New("no webhook-signature matches")
}
