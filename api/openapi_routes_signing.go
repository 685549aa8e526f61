package api

import (
	"net/http"
)

// signingRouteDocs document signing by several: a task's signees and signatures, and a signee's own list
// of tasks to sign.
var signingRouteDocs = map[string]routeDoc{
	"GET /api/:who/messages/:messageId/signees": {Summary: "List the signees a form task names",
		OK: answerOf(http.StatusOK, "the signees, in order", negotiated, signeesResource{})},
	"PUT /api/:who/messages/:messageId/signees": {Summary: "Name the signees of a form task in Utfylling (the whole list)",
		Description: "A person as SocialSecurityNumber and LastName, an organization as OrganizationNumber (and Name), at most 50, each once, " +
			"not the task's own party; SigningDeadline (optional, after now) goes before the service's SigningDeadlineDays. " +
			"Completed, the task waits in Signering until every signing step is signed: the service's steps, or, " +
			"when it declares none, every signee named. Each signee finds it under GET /api/{who}/signing and signs it there, without rights " +
			"for the task's party. A name that matches no one is 400 as one that does not exist; a task no longer in Utfylling is 409.",
		Body: &requestDoc{Media: jsonOnly, Type: signeesBody{}, Example: map[string]any{"Signees": []map[string]any{
			{"SocialSecurityNumber": "<11 digits>", "LastName": "<last name>"}, {"OrganizationNumber": "<9 digits>", "Name": "<name>"}}}},
		OK:       answerOf(http.StatusOK, "the signees now named", negotiated, signeesResource{}),
		Problems: statuses(http.StatusBadRequest, http.StatusConflict, http.StatusUnsupportedMediaType)},
	"GET /api/:who/messages/:messageId/signatures": {Summary: "Read a form task's signing: its steps, what each needs and has, and every signature",
		Description: "Each signature names who signed, on behalf of whom, when, in which step, and the SHA-256 of the content signed; voided ones " +
			"(the task went back to Utfylling) keep their VoidedDateTime. ContentDigest is the digest of the content now.",
		OK: answerOf(http.StatusOK, "the signing", negotiated, signaturesResource{})},
	"DELETE /api/:who/messages/:messageId/signatures": {Summary: "Send a form task in Signering back to Utfylling, voiding its signatures",
		Description: "Each voided signature writes formtask.signature.voided. The task can then be changed and completed again.",
		OK:          answerOf(http.StatusOK, "the task, in Utfylling", negotiated, messageResource{}),
		Problems:    statuses(http.StatusConflict)},
	"GET /api/:who/signing": {Summary: "List the form tasks in Signering that name {who} a signee",
		Description: "{who} is the caller themself (my), or an organization they are main administrator of.",
		OK:          answerOf(http.StatusOK, "the tasks to sign, newest first (at most 200)", negotiated, collectionOf("signing", signingEntry{}))},
	"GET /api/:who/signing/:messageId": {Summary: "Read a form task {who} is asked to sign: its signing, and its forms' data",
		OK: answerOf(http.StatusOK, "the task", negotiated, signingTaskResource{}), Problems: statuses(http.StatusNotFound)},
	"POST /api/:who/signing/:messageId": {Summary: "Sign a form task as the signee {who}",
		Description: "Decided in the task's workflow one signature at a time: a repeat answers as the first; someone the current step does not " +
			"admit is 403 not-a-signee naming why; with the ContentDigest read from GET, a signature of content that changed since is 412. The " +
			"signature that completes the last step archives the task (Outcome Archived, with its ArchiveReference).",
		Body: &requestDoc{Media: jsonOnly, Type: signBody{}, Optional: true, Example: map[string]any{"ContentDigest": "<the ContentDigest read>"}},
		OK:   answerOf(http.StatusOK, "the outcome: Signed (other signatures are missing) or Archived", negotiated, signedResource{}),
		Problems: statuses(http.StatusBadRequest, http.StatusConflict, http.StatusNotFound, http.StatusPreconditionFailed,
			http.StatusUnsupportedMediaType)},
}
