package notification

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/internal/refusal"
)

func TestCheckRefusesEachFieldPrecisely(t *testing.T) {
	now := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	both := Configured{Email: true, Sms: true}
	for _, c := range []struct {
		name   string
		order  Order
		conf   Configured
		single bool
		kind   Kind
		detail string
	}{
		{"no channel", Order{}, both, true, BadInput, "Notification.Channel is one of Email, Sms, EmailPreferred, SmsPreferred"},
		{"sms without gateway", Order{Channel: Sms}, Configured{Email: true}, true, ChannelUnavailable,
			"Notification.Channel Sms: no SMS gateway is configured here; order Email or EmailPreferred"},
		{"unknown placeholder", Order{Channel: Email, EmailBody: "Hei $name$"}, both, true, BadInput,
			"Notification.EmailBody: unknown placeholder $name$ (known: $recipientName$, $subject$, $link$, $dueDate$)"},
		{"subject over two lines", Order{Channel: Email, EmailSubject: "Hei\r\nBcc: x@example.org"}, both, true, BadInput,
			"Notification.EmailSubject holds a control character or line break"},
		{"too many reminders", Order{Channel: Email, Reminders: 6, ReminderDays: 7}, both, true, BadInput,
			"Notification.Reminders.Count is from 0 to 5"},
		{"reminders without days", Order{Channel: Email, Reminders: 1}, both, true, BadInput,
			"Notification.Reminders.AfterDays is from 1 to 90"},
		{"far ahead", Order{Channel: Email, SendAt: ptr(now.AddDate(2, 0, 0))}, both, true, BadInput,
			"Notification.RequestedSendTime lies more than a year ahead"},
		{"addresses for many", Order{Channel: Email, Addresses: &Addresses{EmailAddress: "a@example.org"}}, both, false, BadInput,
			"Notification.Recipient: addresses can be given only for one recipient; the others are reached at their contact data"},
		{"bad e-mail", Order{Channel: Email, Addresses: &Addresses{EmailAddress: "Eve <a@example.org>"}}, both, true, BadInput,
			"Notification.Recipient.EmailAddress is not an e-mail address"},
		{"bad mobile", Order{Channel: Sms, Addresses: &Addresses{MobileNumber: "4740-000"}}, both, true, BadInput,
			"Notification.Recipient.MobileNumber is 8 to 15 digits, optionally after a +"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := check(c.order, c.conf, now, c.single)
			require.Error(t, err)
			assert.True(t, refusal.Is(err, c.kind), "%v", err)
			assert.Equal(t, c.detail, err.Error())
		})
	}
	long := make([]byte, MaxSmsText+1)
	for i := range long {
		long[i] = 'x'
	}
	_, err := check(Order{Channel: Sms, SmsText: string(long)}, both, now, true)
	assert.EqualError(t, err, "Notification.SmsText has 1601 characters; at most 1600")
}

func TestCheckFillsDefaultsAndSettlesTheChannel(t *testing.T) {
	now := time.Now()
	o, err := check(Order{Channel: SmsPreferred}, Configured{Email: true}, now, false)
	require.NoError(t, err)
	assert.Equal(t, Email, o.Channel, "without a gateway the …Preferred channels use e-mail")
	assert.Equal(t, DefaultEmailSubject, o.EmailSubject)
	assert.Equal(t, DefaultSmsText, o.SmsText)
	o, err = check(Order{Channel: EmailPreferred}, Configured{Email: true, Sms: true}, now, false)
	require.NoError(t, err)
	assert.Equal(t, EmailPreferred, o.Channel)
}

func TestRouteFallsBackPerChannel(t *testing.T) {
	both, mailOnly, smsOnly := Addresses{"a@example.org", "+4790000000"}, Addresses{EmailAddress: "a@example.org"}, Addresses{MobileNumber: "+4790000000"}
	for _, c := range []struct {
		channel string
		a       Addresses
		want    string
	}{
		{Email, both, Email}, {Email, smsOnly, ""}, {Sms, mailOnly, ""}, {Sms, both, Sms},
		{EmailPreferred, smsOnly, Sms}, {EmailPreferred, both, Email}, {SmsPreferred, mailOnly, Email}, {SmsPreferred, both, Sms},
		{SmsPreferred, Addresses{}, ""},
	} {
		got, _ := route(c.channel, c.a)
		assert.Equal(t, c.want, got, "%s %+v", c.channel, c.a)
	}
}

func TestTemplatesCannotInjectHeadersOrHTML(t *testing.T) {
	v := values{Name: "Eve\r\nBcc: x@example.org", Subject: `<script>alert(1)</script>`, Link: "https://postbox.example/m?a=1&b=2"}
	assert.Equal(t, "Til Eve  Bcc: x@example.org", fill("Til $recipientName$", v, oneLine))
	h := htmlBody("Hei $recipientName$ & co\n$subject$\n$link$", v)
	assert.NotContains(t, h, "<script>")
	assert.Contains(t, h, "&lt;script&gt;alert(1)&lt;/script&gt;")
	assert.Contains(t, h, "x@example.org &amp; co")
	assert.Contains(t, h, `<a href="https://postbox.example/m?a=1&amp;b=2">`)
}

func ptr[T any](v T) *T { return &v }
