-- Free-text search without a trigram scan of whole messages. A word of a search matched as a substring
-- (search_text LIKE '%w%' over a trigram index of the whole text) gave lossy bitmaps over thousands of
-- heap pages and a recheck of every long text in them; on 1,000,000 messages a rare search of three
-- words took over a second. Now:
--   * search_words holds, besides the stemmed words of the message's language, each distinct run of
--     letters and digits of the text (its terms) as it is, and
--   * search_lexicon holds every lexeme of every message's search_words once: the terms, and the stems.
-- A search word is looked up in the lexicon first and becomes the exact lexemes it stands for: the stems
-- and terms that start with its stem (a word's start in the message's language), and the terms that
-- contain it. The whole search is then one tsquery of exact lexemes over search_words, which the GIN
-- index answers exactly: no prefix scans of the index, and no message text read again to check it. The
-- lexicon only grows: a lexeme no message holds any more costs a lookup that finds nothing.

CREATE TABLE search_lexicon (
    word text COLLATE "C" NOT NULL,
    term boolean NOT NULL, -- a run of letters and digits of a text, or else a stem of one
    PRIMARY KEY (word, term)
);
-- Prefixes (LIKE 'stem%') and substrings (LIKE '%word%') with a pattern known only when the lookup runs.
CREATE INDEX search_lexicon_trigram ON search_lexicon USING gin (word gin_trgm_ops);

CREATE OR REPLACE FUNCTION messages_search_fill() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    owner   text;
    content text;
    stems   tsvector;
    terms   text[];
BEGIN
    SELECT o.name INTO owner
    FROM services s JOIN service_owners o ON o.code = s.service_owner_code
    WHERE s.service_code = NEW.service_code AND s.service_edition = NEW.service_edition;
    -- Tags become spaces and the commonest entities characters, so markup never joins or splits words.
    content := lower(concat_ws(' ', NEW.subject, NEW.summary,
        replace(replace(replace(regexp_replace(NEW.body, '<[^>]*>', ' ', 'g'), '&nbsp;', ' '), '&amp;', '&'), '&quot;', '"'),
        NEW.message_sender, owner));
    -- A run longer than a lexeme may be (2047 bytes) is no word anyone searches for.
    terms := ARRAY(SELECT DISTINCT t FROM regexp_split_to_table(content, '[^[:alnum:]]+') t
        WHERE t <> '' AND octet_length(t) < 2048 ORDER BY t);
    stems := to_tsvector(search_config(NEW.language), content);
    NEW.search_words := stems || array_to_tsvector(terms);
    INSERT INTO search_lexicon (word, term)
    SELECT stem, false FROM unnest(tsvector_to_array(stems)) stem
    UNION ALL SELECT unnest(terms), true
    ORDER BY 1, 2 -- concurrent writers add new lexemes in one order, so they never wait on each other in a cycle
    ON CONFLICT DO NOTHING;
    RETURN NEW;
END $$;

-- The text is no longer kept: the terms stand for it.
ALTER TABLE messages DROP COLUMN search_text;

-- Refill every message's words (and the lexicon); the index is built afterwards (035_concurrent_indexes.sql),
-- which is faster than keeping it in step row by row.
UPDATE messages SET language = language;
-- The words' index holds the reportee too (btree_gin, a trusted extension that ships with PostgreSQL).
CREATE EXTENSION IF NOT EXISTS btree_gin;
ANALYZE messages, search_lexicon;
