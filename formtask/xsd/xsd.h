// C side of package xsd: a hardened libxml2 parser and XSD validator whose
// issues are forwarded to Go (xsdIssue) through a cgo.Handle.
#ifndef POSTBOX_XSD_H
#define POSTBOX_XSD_H

#include <stdint.h>
#include <libxml/parser.h>
#include <libxml/xmlschemas.h>

// pbx_sink is the per-call state shared by the error handlers. Go owns it
// (it holds no Go pointers) and passes it to every call of one session.
typedef struct {
	uintptr_t handle;   // runtime/cgo.Handle of the Go session
	int room;           // issues still to be forwarded before the cap
	int dropped_errors; // issues beyond the cap, by severity
	int dropped_warnings;
	int max_depth;      // element nesting limit
	int max_namespaces; // namespace declarations in scope
	int depth;          // current element nesting while parsing
	int stopped;        // the parse was aborted by one of our own checks
} pbx_sink;

void pbx_init(void);

// pbx_parse parses buf with the hardened options. It returns -1 when libxml2
// could not allocate a parser; otherwise *doc is the tree, or NULL when the
// document was rejected (the reasons went to the sink).
int pbx_parse(pbx_sink *s, const char *buf, int len, xmlDocPtr *doc);

// pbx_compile compiles an XSD tree; NULL means failure (reasons in the sink).
xmlSchemaPtr pbx_compile(pbx_sink *s, xmlDocPtr doc);

// pbx_validate returns 0 (valid), >0 (invalid) or -1 (internal failure).
int pbx_validate(pbx_sink *s, xmlSchemaPtr schema, xmlDocPtr doc);

#endif
