package mailbox

import "github.com/microcosm-cc/bluemonday"

// bodyPolicy keeps the formatting of a correspondence Body and drops scripts, handlers, styles and
// anything else that could act in the reader's browser.
var bodyPolicy = bluemonday.UGCPolicy().RequireNoReferrerOnLinks(true).AddTargetBlankToFullyQualifiedLinks(true)

// CleanBody is the HTML of a correspondence Body as a reader's browser may be given it: what a sender
// stores is cleaned once on the way in, and what the portal shows is cleaned again (the dataset's own
// messages were never sent through a sender).
func CleanBody(html string) string { return bodyPolicy.Sanitize(html) }
