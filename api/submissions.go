package api

import (
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/submission"
)

// submissionHandlers answer the agency's download queue (/api/serviceowner/submissions…): the room is
// package submission; these parse, call it and render.
type submissionHandlers struct {
	subs      *submission.Service
	downloads fileDownloads
}

type submissionResource struct {
	ArchiveReference string
	Reportee         submissionReporteeResource
	ServiceCode      string
	ServiceEdition   int
	ArchivedDateTime render.Timestamp
	FilledBy         string
	SignedBy         string
	Forms            []submissionFormResource       `xmlitem:"Form"`
	Attachments      []submissionAttachmentResource `xmlitem:"Attachment"`
	Print            submissionPrintResource
	// Signatures are every signature of a task signed by several, in order (none for one signed once).
	Signatures        []submissionSignatureResource `json:",omitempty" xmlitem:"Signature"`
	ConfirmedDateTime *render.Timestamp             `json:",omitempty"`
	ConfirmedBy       string                        `json:",omitempty"`
	Links             render.Links                  `json:"_links"`
}

type submissionSignatureResource struct {
	Step           int
	SignerName     string
	OnBehalfOf     string
	SignedDateTime render.Timestamp
	ContentDigest  string
}

type submissionReporteeResource struct {
	ReporteeID           string `json:"ReporteeId"`
	Name                 string
	OrganizationNumber   string `json:",omitempty"`
	SocialSecurityNumber string `json:",omitempty"`
}

type submissionFormResource struct {
	FormID            int64 `json:"FormId"`
	Type              string
	DataFormatID      string `json:"DataFormatId"`
	DataFormatVersion int
	Name              string
	Size              int64
	SHA256            string
}

type submissionAttachmentResource struct {
	AttachmentID   int64 `json:"AttachmentId"`
	Name           string
	FileName       string
	AttachmentType string
	ContentType    string
	FileSize       int64
	SHA256         string
}

type submissionPrintResource struct {
	Size   int64
	SHA256 string
}

type submissionLogResource struct {
	ID                 int64 `json:"Id"`
	OccurredDateTime   render.Timestamp
	Action             string
	Part               string `json:",omitempty"`
	OrganizationNumber string
	APIKeyName         string `json:"ApiKeyName"`
	AuthMethod         string
	RequestID          string `json:"RequestId"`
}

// mediaZIP is the media type of a whole submission in one file.
const mediaZIP = "application/zip"

// submissionMediaTypes are those a submission is offered in: its description in the HAL types, or all of
// it as a ZIP.
var submissionMediaTypes = append(append([]string(nil), render.MediaTypes...), mediaZIP)

func negotiateSubmission(c *gin.Context) { negotiateOf(c, submissionMediaTypes) }

// submissionsURL is the address of the queue.
func submissionsURL(c *gin.Context) string { return baseURL(c) + "/api/serviceowner/submissions" }

func submissionResourceOf(c *gin.Context, s submission.Submission) submissionResource {
	self := submissionsURL(c) + "/" + s.ArchiveReference
	r := submissionResource{ArchiveReference: s.ArchiveReference, ServiceCode: s.ServiceCode, ServiceEdition: s.ServiceEdition,
		ArchivedDateTime: render.TimestampOf(s.ArchivedAt), FilledBy: s.FilledBy, SignedBy: s.SignedBy,
		Reportee: submissionReporteeResource{ReporteeID: identity.ReporteeID(s.Reportee.ID), Name: s.Reportee.Name,
			OrganizationNumber: s.Reportee.OrganizationNumber, SocialSecurityNumber: s.Reportee.SocialSecurityNumber},
		Print:       submissionPrintResource{Size: s.Print.Size, SHA256: hex.EncodeToString(s.Print.SHA256)},
		Forms:       make([]submissionFormResource, len(s.Forms)),
		Attachments: make([]submissionAttachmentResource, len(s.Attachments)),
	}
	for _, sig := range s.Signatures {
		r.Signatures = append(r.Signatures, submissionSignatureResource{Step: sig.Step, SignerName: sig.SignerName, OnBehalfOf: sig.OnBehalfOf,
			SignedDateTime: render.TimestampOf(sig.SignedAt), ContentDigest: sig.ContentDigest})
	}
	r.Links.Add("self", render.Link{Href: self})
	forms := make([]render.Link, len(s.Forms))
	for i, f := range s.Forms {
		r.Forms[i] = submissionFormResource{FormID: f.ID, Type: f.Type, DataFormatID: f.DataFormatID, DataFormatVersion: f.DataFormatVersion,
			Name: f.Name, Size: f.Size, SHA256: hex.EncodeToString(f.SHA256)}
		forms[i] = render.Link{Href: self + "/forms/" + strconv.FormatInt(f.ID, 10) + "/formdata", Name: f.Name, MimeType: "application/xml"}
	}
	attachments := make([]render.Link, len(s.Attachments))
	for i, a := range s.Attachments {
		r.Attachments[i] = submissionAttachmentResource{AttachmentID: a.ID, Name: a.Name, FileName: a.FileName,
			AttachmentType: a.AttachmentType, ContentType: a.ContentType(), FileSize: a.FileSize, SHA256: hex.EncodeToString(a.SHA256)}
		size := a.FileSize
		attachments[i] = render.Link{Href: self + "/attachments/" + strconv.FormatInt(a.ID, 10), Name: a.Name, FileName: a.FileName,
			FileSize: &size, MimeType: a.ContentType()}
	}
	r.Links.AddArray("formdata", forms)
	r.Links.AddArray("attachment", attachments)
	r.Links.Add("print", render.Link{Href: self + "/print", MimeType: "application/pdf"})
	r.Links.Add("zip", render.Link{Href: self, MimeType: "application/zip"})
	r.Links.Add("confirm", render.Link{Href: self + "/confirm"})
	r.Links.Add("log", render.Link{Href: self + "/log"})
	if s.Confirmation != nil {
		at := render.TimestampOf(s.Confirmation.At)
		r.ConfirmedDateTime, r.ConfirmedBy = &at, s.Confirmation.By
	}
	return r
}

// ownerMessageResource is a message of one of the caller's services, as its owner follows it.
type ownerMessageResource struct {
	MessageID           string `json:"MessageId"`
	Type                string
	ServiceCode         string
	ServiceEdition      int
	Status              string
	Reportee            submissionReporteeResource
	CreatedDate         render.Timestamp
	LastChangedDateTime render.Timestamp
	ArchiveReference    string            `json:",omitempty"`
	ReadDateTime        *render.Timestamp `json:",omitempty"`
	ConfirmedDateTime   *render.Timestamp `json:",omitempty"`
	Links               render.Links      `json:"_links"`
}

func ownerMessageResourceOf(c *gin.Context, m submission.OwnerMessage) ownerMessageResource {
	r := ownerMessageResource{MessageID: m.MessageID, Type: m.Type, ServiceCode: m.ServiceCode, ServiceEdition: m.ServiceEdition,
		Status: m.Status, CreatedDate: render.TimestampOf(m.CreatedAt), LastChangedDateTime: render.TimestampOf(m.LastChangedAt),
		ArchiveReference: m.ArchiveReference, ReadDateTime: render.TimestampOrNull(m.ReadAt), ConfirmedDateTime: render.TimestampOrNull(m.ConfirmedAt),
		Reportee: submissionReporteeResource{ReporteeID: identity.ReporteeID(m.Reportee.ID), Name: m.Reportee.Name,
			OrganizationNumber: m.Reportee.OrganizationNumber, SocialSecurityNumber: m.Reportee.SocialSecurityNumber}}
	kind := "formtask"
	if m.Type == "Correspondence" {
		kind = "correspondence"
	}
	r.Links.Add("metadata", render.Link{Href: fmt.Sprintf("%s/api/metadata/%s/%s/%d", baseURL(c), kind, url.PathEscape(m.ServiceCode), m.ServiceEdition)})
	if m.InQueue {
		r.Links.Add("submission", render.Link{Href: submissionsURL(c) + "/" + m.ArchiveReference})
	}
	return r
}

// listOwnerMessages lists the messages of the caller's services in every mailbox, with where each stands.
func (h *submissionHandlers) listOwnerMessages(c *gin.Context) {
	f, err := submission.ParseMessageFilter(c.Request.URL.Query())
	if err != nil {
		abort(c, err)
		return
	}
	limit, after, err := ownerMessagesPage(c)
	if err != nil {
		abort(c, err)
		return
	}
	msgs, more, err := h.subs.Messages(c.Request.Context(), serviceOwnerOf(c).Code, f, after, limit)
	if err != nil {
		abort(c, err)
		return
	}
	items := make([]ownerMessageResource, len(msgs))
	for i, m := range msgs {
		items[i] = ownerMessageResourceOf(c, m)
	}
	var links render.Links
	links.Add("self", render.Link{Href: pageURL(c, -1)})
	if more {
		u := *c.Request.URL
		q := u.Query()
		q.Set("continuation", msgs[len(msgs)-1].Key().Token())
		u.RawQuery = encodeQuery(q)
		links.Add("next", render.Link{Href: baseURL(c) + u.RequestURI()})
	}
	respond(c, http.StatusOK, render.Collection{Links: links, Embedded: render.EmbedList("messages", items)})
}

// ownerMessagesPage reads the paging of the owner's message list: $top and the continuation token.
func ownerMessagesPage(c *gin.Context) (int, submission.MessageKey, error) {
	limit, err := keysetLimit(c)
	if err != nil {
		return 0, submission.MessageKey{}, err
	}
	var after submission.MessageKey
	if token, ok := c.GetQuery("continuation"); ok {
		if after, ok = submission.ParseMessageKey(token); !ok {
			return 0, after, problem.New(http.StatusBadRequest, "invalid-continuation", "the continuation token is not one this list issued")
		}
	}
	return limit, after, nil
}

// submissionActor is the calling owner's client as the submission log records it.
func submissionActor(c *gin.Context) submission.Actor {
	p := principalOf(c)
	key, _ := apiKeyOf(c)
	return submission.Actor{ServiceOwner: serviceOwnerOf(c).Code, OrganizationNumber: p.OrganizationNumber,
		APIKeyName: key.Name, AuthMethod: string(p.Method), RequestID: requestID(c)}
}

// keysetPage reads the paging of a keyset list that takes no OData options but $top: the page size and
// the key a continuation token carries.
func keysetPage(c *gin.Context, list string) (limit int, after int64, err error) {
	if limit, err = keysetLimit(c); err != nil {
		return 0, 0, err
	}
	if token, ok := c.GetQuery("continuation"); ok {
		if after, ok = decodeContinuation(token, list); !ok {
			return 0, 0, problem.New(http.StatusBadRequest, "invalid-continuation", "the continuation token is not one this list issued")
		}
	}
	return limit, after, nil
}

// keysetLimit reads $top of a keyset list. Other OData options are refused, never ignored.
func keysetLimit(c *gin.Context) (int, error) {
	for _, option := range []string{"$filter", "$orderby", "$skip", "search"} {
		if _, ok := c.GetQuery(option); ok {
			return 0, problem.New(http.StatusBadRequest, "invalid-query",
				"this list takes its own filters and pages with continuation and $top; %s is not one of them", option)
		}
	}
	v, ok := c.GetQuery("$top")
	if !ok {
		return MaxPageSize, nil
	}
	limit, err := strconv.Atoi(v)
	if err != nil || limit < 1 || limit > MaxPageSize {
		return 0, problem.New(http.StatusBadRequest, "invalid-query", "$top is a whole number from 1 to %d", MaxPageSize)
	}
	return limit, nil
}

// keysetCollection renders a page of a keyset list, each row as resourceOf makes it: its next link carries
// the key of the page's last row.
func keysetCollection[Row, Resource any](c *gin.Context, list string, rows []Row, resourceOf func(Row) Resource,
	keyOf func(Row) int64, more bool) render.Collection {
	items := make([]Resource, len(rows))
	var lastKey int64
	for i, r := range rows {
		items[i], lastKey = resourceOf(r), keyOf(r)
	}
	var links render.Links
	links.Add("self", render.Link{Href: pageURL(c, -1)})
	if more {
		u := *c.Request.URL
		q := u.Query()
		q.Set("continuation", encodeContinuation(list, lastKey))
		u.RawQuery = encodeQuery(q)
		links.Add("next", render.Link{Href: baseURL(c) + u.RequestURI()})
	}
	return render.Collection{Links: links, Embedded: render.EmbedList(list, items)}
}

// listSubmissions lists the caller's queue, oldest archive first, unconfirmed ones unless asked otherwise.
func (h *submissionHandlers) listSubmissions(c *gin.Context) {
	f, err := submission.ParseFilter(c.Request.URL.Query())
	if err != nil {
		abort(c, err)
		return
	}
	limit, after, err := keysetPage(c, "submissions")
	if err != nil {
		abort(c, err)
		return
	}
	subs, more, err := h.subs.List(c.Request.Context(), serviceOwnerOf(c).Code, f, after, limit)
	if err != nil {
		abort(c, err)
		return
	}
	respond(c, http.StatusOK, keysetCollection(c, "submissions", subs,
		func(s submission.Submission) submissionResource { return submissionResourceOf(c, s) }, submission.Submission.Key, more))
}

// getSubmission answers one submission: its description in the HAL media types, or with
// Accept: application/zip the whole of it as one streamed ZIP.
func (h *submissionHandlers) getSubmission(c *gin.Context) {
	ref := c.Param("archiveReference")
	if render.Format(c) == mediaZIP {
		sub, err := h.subs.OpenZIP(c.Request.Context(), submissionActor(c), ref)
		if err != nil {
			abort(c, err)
			return
		}
		downloadHeaders(c, mediaZIP, submission.ZIPName(ref), nil)
		c.Status(http.StatusOK)
		if err := h.subs.WriteZIP(c.Request.Context(), c.Writer, sub); err != nil {
			// The status and part of the body are sent: the connection is cut, so the client's ZIP lacks its
			// central directory and is refused by every reader; recoverPanics logs the cause.
			_ = c.Error(err)
			panic(http.ErrAbortHandler)
		}
		return
	}
	sub, err := h.subs.Get(c.Request.Context(), serviceOwnerOf(c).Code, ref)
	if err != nil {
		abort(c, err)
		return
	}
	respondTagged(c, submissionResourceOf(c, sub))
}

// getSubmissionFormData answers the XML of an archived form exactly as it was signed.
func (h *submissionHandlers) getSubmissionFormData(c *gin.Context) {
	id, ok := submissionPartID(c, "formId")
	if !ok {
		return
	}
	sub, form, data, err := h.subs.FormData(c.Request.Context(), submissionActor(c), c.Param("archiveReference"), id)
	if err != nil {
		abort(c, err)
		return
	}
	downloadHeaders(c, "application/xml; charset=utf-8", "", form.SHA256)
	serveContent(c, "", sub.ArchivedAt, strings.NewReader(data))
}

// getSubmissionAttachment streams an archived attachment, with Range and an ETag of its SHA-256.
func (h *submissionHandlers) getSubmissionAttachment(c *gin.Context) {
	id, ok := submissionPartID(c, "attachmentId")
	if !ok {
		return
	}
	sub, a, err := h.subs.Attachment(c.Request.Context(), submissionActor(c), c.Param("archiveReference"), id)
	if err != nil {
		abort(c, err)
		return
	}
	downloadHeaders(c, a.ContentType(), a.FileName, a.SHA256)
	c.Header("X-Content-Type-Options", "nosniff")
	h.downloads.serve(c, a.SHA256, a.FileSize, a.FileName, a.ContentType(), sub.ArchivedAt)
}

// getSubmissionPrint answers the archived print.
func (h *submissionHandlers) getSubmissionPrint(c *gin.Context) {
	sub, pdf, err := h.subs.Print(c.Request.Context(), submissionActor(c), c.Param("archiveReference"))
	if err != nil {
		abort(c, err)
		return
	}
	downloadHeaders(c, "application/pdf", sub.ArchiveReference+".pdf", sub.Print.SHA256)
	serveContent(c, "", sub.ArchivedAt, strings.NewReader(string(pdf)))
}

// confirmSubmission takes a submission off the unconfirmed queue; a repeat answers the same.
func (h *submissionHandlers) confirmSubmission(c *gin.Context) {
	sub, err := h.subs.Confirm(c.Request.Context(), submissionActor(c), c.Param("archiveReference"))
	if err != nil {
		abort(c, err)
		return
	}
	respond(c, http.StatusOK, submissionResourceOf(c, sub))
}

// listSubmissionLog lists who downloaded which part of a submission, and who confirmed it.
func (h *submissionHandlers) listSubmissionLog(c *gin.Context) {
	limit, after, err := keysetPage(c, "log")
	if err != nil {
		abort(c, err)
		return
	}
	entries, more, err := h.subs.Log(c.Request.Context(), serviceOwnerOf(c).Code, c.Param("archiveReference"), after, limit)
	if err != nil {
		abort(c, err)
		return
	}
	respond(c, http.StatusOK, keysetCollection(c, "log", entries, func(e submission.LogEntry) submissionLogResource {
		return submissionLogResource{ID: e.ID, OccurredDateTime: render.TimestampOf(e.At), Action: e.Action, Part: e.Part,
			OrganizationNumber: e.OrganizationNumber, APIKeyName: e.APIKeyName, AuthMethod: e.AuthMethod, RequestID: e.RequestID}
	}, func(e submission.LogEntry) int64 { return e.ID }, more))
}

// submissionPartID parses a part's id of the path; anything else is a part the submission does not have.
func submissionPartID(c *gin.Context, name string) (int64, bool) {
	id, err := strconv.ParseInt(c.Param(name), 10, 64)
	if err != nil || id <= 0 {
		abort(c, submission.ErrNotFound)
		return 0, false
	}
	return id, true
}
