-- A rare search over every party (GET /api/all/messages?search=...) without reading every match. The
-- messages_search_words index answers "fishing invoice 2022" with its 2,120 matches out of 1,000,000
-- messages in about 4 ms, and the statement then read each match from the table (2,093 pages), checked
-- the caller's rights on it and sorted them all for a page of 50: about 17 ms. Matches are spread over
-- time, and the newest 50 lie in the newest months, so the list now asks the index for the matches of
-- the newest month first, then of the two before, the four before those, and so on, and stops when the
-- page is full (see ListAllMessagesSQL).
--
-- For that, messages_search_months indexes each lexeme of search_words prefixed with the month of the
-- message's created_date: '24311:fishing' is "fishing" in December 2025 (2025 * 12 + 11). The index
-- follows the message by itself (an expression of its columns), so the triggers and postbox gen need no
-- change, and every message is in it: no message can be without its month words. A search word's
-- lexemes in some months are then exact entries of the index, whose posting lists are a month's share
-- of the word's. It is a text[] (array_ops), not a tsvector, so no message's words can outgrow the
-- 1 MB of a tsvector by their prefixes.

-- The month of a time as a number: year * 12 + month - 1.
CREATE FUNCTION search_month(created timestamp) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN extract(year FROM created)::integer * 12 + extract(month FROM created)::integer - 1;

-- Each lexeme of words as 'month:lexeme', the month of created. Written with string functions alone, so
-- that PostgreSQL inlines it (a filter on it costs a few microseconds a message, not fifteen). No lexeme
-- holds the unit separator (U+001F): the parser takes control characters for blanks, and terms are
-- letters and digits.
CREATE FUNCTION search_month_words(words tsvector, created timestamp) RETURNS text[]
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN CASE WHEN words = ''::tsvector THEN '{}'::text[]
        ELSE string_to_array(search_month(created) || ':'
            || array_to_string(tsvector_to_array(words), E'\x1f' || search_month(created) || ':'), E'\x1f') END;

-- The first moment of a month of search_month.
CREATE FUNCTION search_month_start(month integer) RETURNS timestamp
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN make_timestamp(month / 12, month % 12 + 1, 1, 0, 0, 0);

-- The entries of lexemes in the months first..last, to match search_month_words with &&.
CREATE FUNCTION search_months_of(lexemes text[], first integer, last integer) RETURNS text[]
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN ARRAY(SELECT m || ':' || l FROM generate_series(first, last) m, unnest(lexemes) l);

-- (its index, messages_search_months, is built by 035_concurrent_indexes.sql)
