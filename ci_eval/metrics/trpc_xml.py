"""Well-formed XML as trpc-agent-go's XML criterion decides it (``matchValid`` in
``evaluation/metric/criterion/xml/xml.go``, trpc-group/trpc-agent-go at 0e352fdd): Go's
``encoding/xml`` decoder (strict) reads every token without error, and the tokens make one root
element with nothing but whitespace outside it. Pure: text in, the reason it is not, or None.

Python's expat reads the text here, made safe: nothing external is ever read (no DTD, no external
entity), and no entity a document declares is expanded into its content (Go's decoder knows only
``lt gt amp apos quot`` and character references; any other ``&name;`` is its error, and is one
here). What Go's decoder also refuses and expat would take is refused as Go refuses it: an XML
declaration with a version other than 1.0 or an encoding other than UTF-8 (Go has no charset
reader by default), a byte-order mark before the root (text outside it, to matchValid).

Where expat and Go's decoder still differ (rare in an agent's answer):

- expat refuses a duplicate attribute, attributes with no space between them, an XML
  declaration after anything but whitespace, and a DOCTYPE inside or after the root; Go's
  decoder takes them;
- a document declaring an entity whose text names another entity is refused here (that is how
  an expansion bomb is built); Go takes it if the entity is never used;
- a character reference to a surrogate (``&#xD800;``) is expat's error; Go's decoder reads it as
  U+FFFD;
- whitespace outside the root: Go trims Unicode's (``strings.TrimSpace``), expat only XML's; the
  text's leading and trailing whitespace is trimmed as Go's, whitespace between the root and a
  later comment only as XML's.
"""

from __future__ import annotations

import re
from xml.parsers import expat

# Go's unicode.IsSpace, less \v and \f: Go trims them too but its decoder refuses them as
# characters first (they are outside XML's character range)
_GO_SPACE = "\t\n\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"  # noqa: E501
_GO_TRIM = _GO_SPACE + "\v\f"
_PREDEFINED = frozenset({"lt", "gt", "amp", "apos", "quot"})
_ENTITY_REF = re.compile(r"&([^#;&\s][^;&\s]*);")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class _NotXML(Exception):
    pass


def _refuse_external(*_: object) -> int:
    raise _NotXML("external entities are not read")


def _refuse_reference(name: str, _is_parameter: bool) -> None:
    raise _NotXML(f"invalid character entity &{name};")


def _declared(name: str, _is_parameter: bool, value: str | None, *_: object) -> None:
    if value is not None and ("&" in value or "%" in value):
        raise _NotXML(
            f"entity {name} names other entities in its text (refused: ci-eval expands none)"
        )


def _xml_declaration(version: str | None, encoding: str | None, _standalone: int) -> None:
    if version and version != "1.0":
        raise _NotXML(f'xml: unsupported version "{version}"; only version 1.0 is supported')
    if encoding and encoding.lower() != "utf-8":
        raise _NotXML(f'xml: encoding "{encoding}" declared but Decoder.CharsetReader is nil')


def _markup(data: str) -> None:
    """A start tag's raw text: an entity reference in an attribute value is Go's error (expat
    would expand a declared one)."""
    if data.startswith("<") and not data.startswith(("<!", "<?", "</")):
        for name in _ENTITY_REF.findall(data):
            if name not in _PREDEFINED:
                raise _NotXML(f"invalid character entity &{name};")


def xml_problem(content: str) -> str | None:
    """Why ``content`` is not one well-formed XML document to trpc-agent-go, or None."""
    if not content.strip(_GO_TRIM):
        return "xml content is empty"
    text = _LONE_SURROGATE.sub("\ufffd", content).strip(_GO_SPACE)
    if text.startswith("\ufeff"):
        return "xml content has non-whitespace text outside the root element"
    parser = expat.ParserCreate()  # no namespace processing: Go does not refuse a bare prefix
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.ExternalEntityRefHandler = _refuse_external
    parser.EntityDeclHandler = _declared
    parser.SkippedEntityHandler = _refuse_reference
    parser.XmlDeclHandler = _xml_declaration
    parser.CharacterDataHandler = lambda _data: None
    # a default handler keeps expat from expanding entities in content (it reports them as
    # skipped instead) and hands over each start tag's raw text
    parser.DefaultHandler = _markup
    try:
        parser.Parse(text.encode("utf-8"), True)
    except _NotXML as exc:
        return str(exc)
    except expat.ExpatError as exc:
        return expat.ErrorString(exc.code) + f" (line {exc.lineno}, column {exc.offset + 1})"
    return None
