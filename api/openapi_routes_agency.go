package api

import (
	"net/http"
)

// agencyRouteDocs document the agency's routes: its download queue, its sending and its notifications.
var agencyRouteDocs = map[string]routeDoc{
	// The agency's download queue of submissions (package submission).
	"GET /api/serviceowner/submissions": {Summary: "List the submissions to the caller's services, oldest archive first (the unconfirmed ones unless asked)",
		Query: params(forceEI, param{"serviceCode", "only this service", "string", false},
			param{"serviceEdition", "only this edition (needs serviceCode)", "integer", false},
			param{"confirmed", "false (the default: still to be received), true or all", "string", false},
			param{"archivedAfter", "archived after this time (RFC 3339, a local date-time or a date)", "string", false},
			param{"archivedBefore", "archived before this time (RFC 3339, a local date-time or a date)", "string", false},
			param{"reportee", "sent for this party: organization number, national identity number or reportee id", "string", false},
			param{"$top", "at most this many submissions (at most 50)", "integer", false},
			param{"continuation", "the token of a next link: continues the queue where the last page ended", "string", false}),
		OK: answerOf(http.StatusOK, "a page of submissions", negotiated, collectionOf("submissions", submissionResource{}))},
	"GET /api/serviceowner/submissions/:archiveReference": {Summary: "Read a submission; with Accept: application/zip, download all of it as one ZIP with a manifest.json of SHA-256 digests",
		Query: params(forceEI),
		OK: answer{Status: http.StatusOK, Description: "the submission, or all its parts as a ZIP", Media: negotiated, Body: submissionResource{},
			Headers: []string{"ETag"}, Also: map[string]any{mediaZIP: binary}},
		Problems: statuses(http.StatusNotFound), Conditional: true},
	"GET /api/serviceowner/submissions/:archiveReference/forms/:formId/formdata": {Summary: "Download a submitted form's data, the XML exactly as signed",
		Query:    params(forceEI),
		OK:       answerOf(http.StatusOK, "the form data", "application/xml", xmlDocument, "ETag"),
		Problems: statuses(http.StatusNotFound), Conditional: true, Download: true},
	"GET /api/serviceowner/submissions/:archiveReference/attachments/:attachmentId": {Summary: "Download a submitted attachment (Range requests allowed; the ETag is its SHA-256)",
		Query:    params(forceEI),
		OK:       answerOf(http.StatusOK, "the attachment's bytes, in its own content type", "*/*", binary, "ETag"),
		Problems: statuses(http.StatusNotFound), Conditional: true, Download: true},
	"GET /api/serviceowner/submissions/:archiveReference/print": {Summary: "Download a submission's print as archived",
		Query:    params(forceEI),
		OK:       answerOf(http.StatusOK, "the PDF", "application/pdf", binary, "ETag"),
		Problems: statuses(http.StatusNotFound), Conditional: true, Download: true},
	"GET /api/serviceowner/submissions/:archiveReference/log": {Summary: "List who downloaded which part of a submission, and who confirmed it",
		Query: params(forceEI, param{"$top", "at most this many lines (at most 50)", "integer", false},
			param{"continuation", "the token of a next link", "string", false}),
		OK:       answerOf(http.StatusOK, "a page of the log, oldest first", negotiated, collectionOf("log", submissionLogResource{})),
		Problems: statuses(http.StatusNotFound)},
	"GET /api/serviceowner/messages": {Summary: "List the messages of the caller's services in every mailbox, with where each stands",
		Description: "Form tasks in Utfylling, Signering or Sendt og arkivert (with the ArchiveReference of its submission); correspondence with when it was read and confirmed. By service, then message id.",
		Query: params(forceEI, param{"serviceCode", "only this service", "string", false},
			param{"serviceEdition", "only this edition (needs serviceCode)", "integer", false},
			param{"status", "only this status: Utfylling, Signering, Sendt og arkivert, Ulest, Lest or Arkivert", "string", false},
			param{"type", "FormTask or Correspondence", "string", false},
			param{"reportee", "only this party's: organization number, national identity number or reportee id", "string", false},
			param{"$top", "at most this many messages (at most 50)", "integer", false},
			param{"continuation", "the token of a next link", "string", false}),
		OK: answerOf(http.StatusOK, "a page of messages", negotiated, collectionOf("messages", ownerMessageResource{}))},
	"PUT /api/serviceowner/submissions/:archiveReference/confirm": {Summary: "Confirm that the agency has received a submission (idempotent)",
		Query:    params(forceEI),
		OK:       answerOf(http.StatusOK, "the submission, confirmed", negotiated, submissionResource{}),
		Problems: statuses(http.StatusNotFound)},

	// The agency's sending (package correspondence).
	"POST /api/serviceowner/correspondence": {Summary: "Send a correspondence of one of the caller's services to up to 10,000 recipients",
		Description: "Accepted as one shipment, whose workflow makes one message per accepted recipient (at once, or at VisibleDateTime), " +
			"marks unconfirmed ones overdue at DueDateTime and purges them at AllowSystemDeleteDateTime. Recipients that cannot receive it " +
			"(malformed, unknown, deleted, duplicate) are answered with the reason and get nothing; the others are sent.",
		Query: params(forceEI),
		Body: &requestDoc{Media: jsonOnly, Type: correspondenceBody{}, Example: map[string]any{"ServiceCode": "7001", "ServiceEdition": 1,
			"Recipients": []string{"310123455", "12857812326"}, "Subject": "Vedtak", "Body": "<p>Søknaden er innvilget.</p>",
			"IsConfirmationNeeded": true, "DueDateTime": "2030-01-31T12:00:00"}},
		OK:       answerOf(http.StatusAccepted, "the shipment, with what became of each recipient", negotiated, shipmentAcceptedResource{}, "Location"),
		Problems: statuses(http.StatusBadRequest, http.StatusForbidden, http.StatusServiceUnavailable)},
	"POST /api/serviceowner/correspondence/attachments": {Summary: "Upload a larger attachment for correspondence to come, streamed",
		Description: "The raw bytes of the file (at most 512 MiB), streamed into the store; a send references it in Attachments[] by its " +
			"AttachmentId, and its bytes are stored once however many recipients and shipments have it. The name is checked before a byte " +
			"is read and the content as it arrives (not empty, not an executable, what its name says); a refused or cut upload keeps nothing.",
		Query:    params(forceEI, param{"fileName", "the file's name", "string", true}),
		Body:     &requestDoc{Media: []string{"application/octet-stream"}, Type: binary},
		OK:       answerOf(http.StatusCreated, "the upload, to reference by its AttachmentId", negotiated, uploadResource{}),
		Problems: statuses(http.StatusBadRequest, http.StatusRequestEntityTooLarge)},
	"GET /api/serviceowner/correspondence/shipments/:shipmentId": {Summary: "Follow a shipment: its counts and a page of its recipients, each with where its message stands",
		Query: params(forceEI, param{"state", "only recipients in this state: pending, created, read, unread, confirmed, refused or retracted", "string", false},
			param{"$top", "at most this many recipients", "integer", false},
			param{"continuation", "the token of a next link", "string", false}),
		OK:       answerOf(http.StatusOK, "the shipment with a page of its recipients, in the request's order", negotiated, shipmentResource{}),
		Problems: statuses(http.StatusBadRequest, http.StatusNotFound)},
	"DELETE /api/serviceowner/correspondence/:messageId": {Summary: "Retract a sent message its recipient has not opened",
		Description: "A message still waiting for its VisibleDateTime is never made; one in the mailbox is deleted for good with a correspondence.retracted event.",
		Query:       params(forceEI),
		OK:          answer{Status: http.StatusNoContent, Description: "retracted"},
		Problems:    statuses(http.StatusNotFound, http.StatusConflict)},
	"POST /api/serviceowner/formtasks": {Summary: "Put a form task of one of the caller's services, pre-filled, into a party's mailbox",
		Description: "The forms are validated against their XSDs at once (a refusal names the field, as on a PUT); the party fills in the rest, " +
			"signs and submits it, and its archive lands in the caller's submission queue. At DueDateTime a task not yet submitted gets formtask.overdue. " +
			"With a VisibleDateTime in the future the answer is 202: the task, its id reserved, is not in the mailbox at all until then (no list, " +
			"no read, no event); at that time it is created, with its formtask.created event, and its notification goes.",
		Query: params(forceEI),
		Body: &requestDoc{Media: jsonOnly, Type: prefillBody{}, Example: map[string]any{"Reportee": "310123455", "ServiceCode": "4711",
			"ServiceEdition": 2, "Subject": "Årsoppgave 2026", "DueDateTime": "2030-03-31T23:59:59",
			"_embedded": map[string]any{"forms": []map[string]any{{"Type": "MainForm", "DataFormatId": "<id>", "DataFormatVersion": 1,
				"FormData": "<XML>"}}}}},
		OK:       answerOf(http.StatusCreated, "the new task", negotiated, prefilledResource{}),
		More:     []answer{answerOf(http.StatusAccepted, "the task, scheduled to appear at its VisibleDateTime", negotiated, prefilledResource{})},
		Problems: statuses(http.StatusBadRequest, http.StatusForbidden, http.StatusConflict, http.StatusServiceUnavailable)},

	// Notifications by e-mail and SMS (package notification).
	"POST /api/serviceowner/messages/:messageId/notifications": {Summary: "Order a notification by e-mail or SMS about a message of one of the caller's services",
		Description: "Sent at RequestedSendTime (or at once) to the party's contact data (an organization's official contact, a person's own) " +
			"or to the Recipient given, with up to 5 reminders AfterDays apart that go only while the message is unread (unconfirmed, for one that " +
			"needs confirmation; not submitted, for a form task). Templates take $recipientName$, $subject$, $link$ and $dueDate$. " +
			"A shipment or a pre-filled task takes the same object as its Notification.",
		Query: params(forceEI),
		Body: &requestDoc{Media: jsonOnly, Type: notificationBody{}, Example: map[string]any{"Channel": "EmailPreferred",
			"EmailSubject": "Nytt brev: $subject$", "EmailBody": "Hei $recipientName$,\nles brevet her: $link$",
			"SmsText": "Nytt brev i Postbox: $link$", "RequestedSendTime": "2030-01-02T08:00:00",
			"Reminders": map[string]any{"AfterDays": 7, "Count": 2}}},
		OK:       answerOf(http.StatusCreated, "the order, to follow at its Location", negotiated, notificationOrderResource{}, "Location"),
		Problems: statuses(http.StatusBadRequest, http.StatusNotFound, http.StatusServiceUnavailable)},
	"GET /api/serviceowner/messages/:messageId/notifications": {Summary: "The caller's notification orders for one message, newest first, each with that message's sends",
		Description: "A message of another owner's services, or one without orders of the caller's, is an empty list.",
		Query:       params(forceEI),
		OK:          answerOf(http.StatusOK, "the orders", negotiated, collectionOf("notifications", messageNotificationResource{})),
		Problems:    statuses(http.StatusNotFound)},
	"GET /api/serviceowner/notifications/:orderId": {Summary: "Follow a notification order: each recipient's notice and reminders, sent, failed (why) or skipped (why)",
		Query: params(forceEI, param{"$top", "at most this many recipients", "integer", false},
			param{"continuation", "the token of a next link", "string", false}),
		OK:       answerOf(http.StatusOK, "the order with a page of its recipients, in order", negotiated, notificationOrderResource{}),
		Problems: statuses(http.StatusBadRequest, http.StatusNotFound)},
}
