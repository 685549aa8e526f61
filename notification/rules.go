package notification

import (
	"html"
	"net/mail"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Configured says which channels this deployment can send on.
type Configured struct {
	Email bool // an SMTP server is configured
	Sms   bool // an SMS gateway is configured
}

// maxSendAhead is how far ahead a RequestedSendTime may lie.
const maxSendAhead = 366 * 24 * time.Hour

var (
	placeholderPattern = regexp.MustCompile(`\$[A-Za-z]+\$`)
	mobilePattern      = regexp.MustCompile(`^\+?[0-9]{8,15}$`)
	placeholders       = []string{PlaceholderName, PlaceholderSubject, PlaceholderLink, PlaceholderDueDate}
)

// check returns o with its defaults filled in and its channel settled for what is configured (a
// …Preferred channel whose second channel is missing is the first alone), or the refusal that names the
// first field at fault. single tells whether the order is for one message (only then may it give
// addresses).
func check(o Order, conf Configured, now time.Time, single bool) (Order, error) {
	if !slices.Contains(Channels, o.Channel) {
		return o, refuse(BadInput, "Notification.Channel is one of %s", strings.Join(Channels, ", "))
	}
	switch {
	case o.Channel == Sms && !conf.Sms:
		return o, refuse(ChannelUnavailable, "Notification.Channel Sms: no SMS gateway is configured here; order Email or EmailPreferred")
	case o.Channel == Email && !conf.Email:
		return o, refuse(ChannelUnavailable, "Notification.Channel Email: no mail server is configured here")
	case o.Channel == EmailPreferred || o.Channel == SmsPreferred:
		if !conf.Sms {
			o.Channel = Email
		} else if !conf.Email {
			o.Channel = Sms
		}
		if !conf.Sms && !conf.Email {
			return o, refuse(ChannelUnavailable, "Notification.Channel: neither a mail server nor an SMS gateway is configured here")
		}
	}
	o.EmailSubject = cmpOr(o.EmailSubject, DefaultEmailSubject)
	o.EmailBody = cmpOr(o.EmailBody, DefaultEmailBody)
	o.SmsText = cmpOr(o.SmsText, DefaultSmsText)
	for _, f := range []struct {
		name, text string
		max        int
		oneLine    bool
	}{{"EmailSubject", o.EmailSubject, MaxEmailSubject, true}, {"EmailBody", o.EmailBody, MaxEmailBody, false},
		{"SmsText", o.SmsText, MaxSmsText, false}} {
		if err := checkTemplate(f.name, f.text, f.max, f.oneLine); err != nil {
			return o, err
		}
	}
	if o.SendAt != nil && o.SendAt.Sub(now) > maxSendAhead {
		return o, refuse(BadInput, "Notification.RequestedSendTime lies more than a year ahead")
	}
	switch {
	case o.Reminders < 0 || o.Reminders > MaxReminders:
		return o, refuse(BadInput, "Notification.Reminders.Count is from 0 to %d", MaxReminders)
	case o.Reminders > 0 && (o.ReminderDays < 1 || o.ReminderDays > MaxReminderDays):
		return o, refuse(BadInput, "Notification.Reminders.AfterDays is from 1 to %d", MaxReminderDays)
	case o.Reminders == 0:
		o.ReminderDays = 0
	}
	if o.Addresses != nil {
		if !single {
			return o, refuse(BadInput, "Notification.Recipient: addresses can be given only for one recipient; the others are reached at their contact data")
		}
		if err := checkAddresses(*o.Addresses); err != nil {
			return o, err
		}
	}
	return o, nil
}

func cmpOr(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// checkTemplate refuses a template over max characters, with an unknown placeholder, with control
// characters, or (oneLine) with a line break.
func checkTemplate(name, text string, max int, oneLine bool) error {
	if !utf8.ValidString(text) {
		return refuse(BadInput, "Notification.%s is not UTF-8", name)
	}
	if n := utf8.RuneCountInString(text); n > max {
		return refuse(BadInput, "Notification.%s has %d characters; at most %d", name, n, max)
	}
	for _, p := range placeholderPattern.FindAllString(text, -1) {
		if !slices.Contains(placeholders, p) {
			return refuse(BadInput, "Notification.%s: unknown placeholder %s (known: %s)", name, p, strings.Join(placeholders, ", "))
		}
	}
	for _, r := range text {
		if unicode.IsControl(r) && (oneLine || (r != '\n' && r != '\r' && r != '\t')) {
			return refuse(BadInput, "Notification.%s holds a control character or line break", name)
		}
	}
	return nil
}

// checkAddresses refuses an e-mail address that is not one bare address and a mobile number that is not
// 8 to 15 digits (with an optional +); it never echoes them.
func checkAddresses(a Addresses) error {
	if a.EmailAddress == "" && a.MobileNumber == "" {
		return refuse(BadInput, "Notification.Recipient gives neither EmailAddress nor MobileNumber")
	}
	if a.EmailAddress != "" {
		parsed, err := mail.ParseAddress(a.EmailAddress)
		if err != nil || parsed.Name != "" || parsed.Address != a.EmailAddress {
			return refuse(BadInput, "Notification.Recipient.EmailAddress is not an e-mail address")
		}
	}
	if a.MobileNumber != "" && !mobilePattern.MatchString(a.MobileNumber) {
		return refuse(BadInput, "Notification.Recipient.MobileNumber is 8 to 15 digits, optionally after a +")
	}
	return nil
}

// route picks the channel and address a recipient is reached at under the order's channel, or "" when
// it has no address for it nor for its fallback.
func route(channel string, a Addresses) (string, string) {
	switch channel {
	case Email:
		return pick(Email, a.EmailAddress)
	case Sms:
		return pick(Sms, a.MobileNumber)
	case EmailPreferred:
		if a.EmailAddress != "" {
			return Email, a.EmailAddress
		}
		return pick(Sms, a.MobileNumber)
	case SmsPreferred:
		if a.MobileNumber != "" {
			return Sms, a.MobileNumber
		}
		return pick(Email, a.EmailAddress)
	}
	return "", ""
}

func pick(channel, address string) (string, string) {
	if address == "" {
		return "", ""
	}
	return channel, address
}

// values are what a template's placeholders stand for, for one recipient.
type values struct {
	Name, Subject, Link string
	DueAt               *time.Time
}

// fill replaces the placeholders of template with v, each value passed through escape first.
func fill(template string, v values, escape func(string) string) string {
	due := ""
	if v.DueAt != nil {
		due = v.DueAt.Format("02.01.2006 15:04")
	}
	return strings.NewReplacer(PlaceholderName, escape(v.Name), PlaceholderSubject, escape(v.Subject),
		PlaceholderLink, escape(v.Link), PlaceholderDueDate, escape(due)).Replace(template)
}

// oneLine makes a value fit a header: control characters (a line break would start a header) become spaces.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

func plain(s string) string { return s }

// htmlBody is the HTML alternative of a plain-text body: the template and every value escaped, lines
// kept, and the link made a link.
func htmlBody(template string, v values) string {
	text := fill(html.EscapeString(template), v, html.EscapeString)
	if link := html.EscapeString(v.Link); link != "" {
		text = strings.ReplaceAll(text, link, `<a href="`+link+`">`+link+`</a>`)
	}
	return "<!DOCTYPE html><html><body><p>" + strings.ReplaceAll(text, "\n", "<br>\n") + "</p></body></html>"
}
