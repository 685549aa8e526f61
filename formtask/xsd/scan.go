package xsd

import "bytes"

// maxAttributes bounds the attributes (namespace declarations included) of
// one start tag. libxml2 2.9 checks attribute uniqueness pairwise before any
// SAX callback can intervene, so one tag with 200,000 attributes (2 MB)
// takes minutes to parse; this is checked by a linear scan beforehand.
const maxAttributes = 64

// skipEnd reports, for markup at the start of rest that has no attributes
// (comment, CDATA, processing instruction, end tag, DOCTYPE), where its
// content starts and what ends it; end is "" for a start tag.
func skipEnd(rest []byte) (start int, end string) {
	if len(rest) < 2 {
		return 0, ""
	}
	switch rest[1] {
	case '?':
		return 2, "?>"
	case '/':
		return 2, ">"
	case '!':
		switch {
		case bytes.HasPrefix(rest, []byte("<!--")):
			return 4, "-->"
		case bytes.HasPrefix(rest, []byte("<![CDATA[")):
			return 9, "]]>"
		}
		return 2, ">" // a DOCTYPE, which the parser rejects
	}
	return 0, ""
}

// crowdedTag returns the offset of the first start tag with more than
// maxAttributes attributes, or -1. It agrees with libxml2 on well-formed
// markup; on malformed markup it may count more attributes, never fewer.
func crowdedTag(doc []byte) int {
	for i := 0; ; {
		j := bytes.IndexByte(doc[i:], '<')
		if j < 0 {
			return -1
		}
		i += j
		rest := doc[i:]
		if start, end := skipEnd(rest); end != "" {
			k := bytes.Index(rest[start:], []byte(end))
			if k < 0 {
				return -1 // unterminated: libxml2 consumes the rest as well
			}
			i += start + k + len(end)
			continue
		}
		n, size := countAttributes(rest)
		if n > maxAttributes {
			return i
		}
		i += size
	}
}

// countAttributes lexes the start tag at the beginning of tag as libxml2
// does: every attribute has one '=' outside quoted values, and a quoted
// value ends at its quote or, as an error that ends the tag, at '<'. It
// returns the count and the bytes consumed (at least one).
func countAttributes(tag []byte) (n, size int) {
	i := 1
	for i < len(tag) {
		switch c := tag[i]; c {
		case '>':
			return n, i + 1
		case '<':
			return n, i
		case '=':
			n++
			i++
		case '"', '\'':
			v := tag[i+1:]
			k := bytes.IndexByte(v, c)
			if k < 0 {
				k = len(v)
			}
			if l := bytes.IndexByte(v[:k], '<'); l >= 0 {
				return n, i + 1 + l
			}
			i += k + 2
		default:
			i++
		}
	}
	return n, len(tag)
}
