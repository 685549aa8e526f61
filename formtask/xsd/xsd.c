#include <stdio.h>
#include <libxml/SAX2.h>
#include <libxml/xmlschemastypes.h>
#include "xsd.h"
#include "_cgo_export.h"

// Form data never needs entities, DTDs or the network. NOENT, DTDLOAD,
// DTDATTR and HUGE must never appear here; COMPACT is safe because the
// tree is never modified. IGNORE_ENC with the "UTF-8" passed to
// xmlCtxtReadMemory reads every document as UTF-8 whatever it declares:
// form data comes from JSON strings, and the byte scan in scan.go must see
// the markup libxml2 sees (UTF-7 or EBCDIC would hide it).
#define PBX_PARSE_OPTIONS (XML_PARSE_NONET | XML_PARSE_COMPACT | XML_PARSE_IGNORE_ENC)

// Refuses every external resource (DTDs, entities, schema includes), so no
// document or schema can make libxml2 read a file or open a connection.
static xmlParserInputPtr pbx_deny_loader(const char *url, const char *id,
					 xmlParserCtxtPtr ctxt) {
	(void)url;
	(void)id;
	(void)ctxt;
	return NULL;
}

void pbx_init(void) {
	xmlInitParser();
	// 2.9 initialises the built-in XSD types lazily without a lock; do it
	// once here so concurrent compiles cannot race on it.
	xmlSchemaInitTypes();
	xmlSetExternalEntityLoader(pbx_deny_loader);
}

static void pbx_emit(pbx_sink *s, int level, int line, const char *msg,
		     xmlNodePtr node) {
	if (s->room <= 0) {
		if (level == XML_ERR_WARNING)
			s->dropped_warnings++;
		else
			s->dropped_errors++;
		return;
	}
	s->room--;
	xmlChar *path = NULL;
	const xmlChar *name = NULL;
	if (node != NULL && (node->type == XML_ELEMENT_NODE ||
			     node->type == XML_ATTRIBUTE_NODE)) {
		path = xmlGetNodePath(node);
		name = node->name;
	}
	xsdIssue(s->handle, level, line, (char *)msg, (char *)name,
		 (char *)path);
	if (path != NULL)
		xmlFree(path);
}

static void pbx_report(pbx_sink *s, xmlErrorPtr err) {
	pbx_emit(s, err->level, err->line,
		 err->message != NULL ? err->message : "unknown error",
		 (xmlNodePtr)err->node);
}

// libxml2 hands the parser's structured handler ctxt->userData, which must
// stay the parser context for the SAX2 tree builder; the sink is in _private.
static void pbx_parser_error(void *ctx, xmlErrorPtr err) {
	pbx_report(((xmlParserCtxtPtr)ctx)->_private, err);
}

static void pbx_schema_error(void *sink, xmlErrorPtr err) {
	pbx_report(sink, err);
}

static void pbx_stop(xmlParserCtxtPtr ctxt, const char *msg) {
	pbx_sink *s = ctxt->_private;
	s->stopped = 1;
	pbx_emit(s, XML_ERR_FATAL, ctxt->input != NULL ? ctxt->input->line : 0,
		 msg, NULL);
	xmlStopParser(ctxt);
}

// Called as soon as "<!DOCTYPE name ...>" is read, before any entity
// declaration is parsed: billion laughs and external entities end here.
static void pbx_internal_subset(void *ctx, const xmlChar *name,
				const xmlChar *external_id,
				const xmlChar *system_id) {
	(void)name;
	(void)external_id;
	(void)system_id;
	pbx_stop(ctx, "DOCTYPE is not allowed");
}

static void pbx_start_element(void *ctx, const xmlChar *localname,
			      const xmlChar *prefix, const xmlChar *uri,
			      int nb_namespaces, const xmlChar **namespaces,
			      int nb_attributes, int nb_defaulted,
			      const xmlChar **attributes) {
	xmlParserCtxtPtr ctxt = ctx;
	pbx_sink *s = ctxt->_private;
	if (++s->depth > s->max_depth) {
		char msg[80];
		snprintf(msg, sizeof msg,
			 "element nesting exceeds the limit of %d levels",
			 s->max_depth);
		pbx_stop(ctxt, msg);
		return;
	}
	// 2.9 looks prefixes up linearly in the namespaces in scope, per
	// element: 16,000 of them made a 5 MB document take 7 s.
	if (ctxt->nsNr / 2 > s->max_namespaces) {
		char msg[80];
		snprintf(msg, sizeof msg,
			 "more than %d namespace declarations in scope",
			 s->max_namespaces);
		pbx_stop(ctxt, msg);
		return;
	}
	xmlSAX2StartElementNs(ctx, localname, prefix, uri, nb_namespaces,
			      namespaces, nb_attributes, nb_defaulted,
			      attributes);
}

static void pbx_end_element(void *ctx, const xmlChar *localname,
			    const xmlChar *prefix, const xmlChar *uri) {
	((pbx_sink *)((xmlParserCtxtPtr)ctx)->_private)->depth--;
	xmlSAX2EndElementNs(ctx, localname, prefix, uri);
}

int pbx_parse(pbx_sink *s, const char *buf, int len, xmlDocPtr *doc) {
	*doc = NULL;
	xmlParserCtxtPtr ctxt = xmlNewParserCtxt();
	if (ctxt == NULL)
		return -1;
	// The SAX block belongs to this context, so overriding it is local.
	ctxt->_private = s;
	ctxt->sax->serror = pbx_parser_error;
	ctxt->sax->internalSubset = pbx_internal_subset;
	ctxt->sax->startElementNs = pbx_start_element;
	ctxt->sax->endElementNs = pbx_end_element;
	s->depth = 0;
	s->stopped = 0;
	xmlDocPtr d = xmlCtxtReadMemory(ctxt, buf, len, NULL, "UTF-8",
					PBX_PARSE_OPTIONS);
	// A stopped parse can still return a (partial) well-formed tree.
	if (d != NULL && (s->stopped || !ctxt->wellFormed)) {
		xmlFreeDoc(d);
		d = NULL;
	}
	xmlFreeParserCtxt(ctxt);
	*doc = d;
	return 0;
}

xmlSchemaPtr pbx_compile(pbx_sink *s, xmlDocPtr doc) {
	xmlSchemaParserCtxtPtr pctxt = xmlSchemaNewDocParserCtxt(doc);
	if (pctxt == NULL)
		return NULL;
	xmlSchemaSetParserStructuredErrors(pctxt, pbx_schema_error, s);
	xmlSchemaPtr schema = xmlSchemaParse(pctxt);
	xmlSchemaFreeParserCtxt(pctxt);
	return schema;
}

int pbx_validate(pbx_sink *s, xmlSchemaPtr schema, xmlDocPtr doc) {
	// One validation context per call: the compiled schema is only read.
	xmlSchemaValidCtxtPtr vctxt = xmlSchemaNewValidCtxt(schema);
	if (vctxt == NULL)
		return -1;
	xmlSchemaSetValidStructuredErrors(vctxt, pbx_schema_error, s);
	int rc = xmlSchemaValidateDoc(vctxt, doc);
	xmlSchemaFreeValidCtxt(vctxt);
	return rc;
}
