-- Free-text search over the mailbox (search= on message lists): the words of Subject, Summary, the text of
-- Body, MessageSender and the ServiceOwner's name, matched
--   * as words, by full-text search in the message's language (norwegian for bokmål 1044 and nynorsk
--     2068, english for 1033), the last letters of each word free (prefix matching), and
--   * as substrings of the lowered text (trigram index), which finds the parts of compound words.
-- A trigger keeps both in step with the message; the owner's name comes from another table, so it cannot
-- be a generated column. Renaming an owner refreshes its messages.

ALTER TABLE messages
    ADD COLUMN language     integer NOT NULL DEFAULT 1044 CHECK (language IN (1044, 2068, 1033)),
    ADD COLUMN search_text  text NOT NULL DEFAULT '',
    ADD COLUMN search_words tsvector NOT NULL DEFAULT ''::tsvector;

-- The text search configuration of an interface language id.
CREATE FUNCTION search_config(language integer) RETURNS regconfig
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN CASE language WHEN 1033 THEN 'english'::regconfig ELSE 'norwegian'::regconfig END;

CREATE FUNCTION messages_search_fill() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    owner text;
BEGIN
    SELECT o.name INTO owner
    FROM services s JOIN service_owners o ON o.code = s.service_owner_code
    WHERE s.service_code = NEW.service_code AND s.service_edition = NEW.service_edition;
    -- Tags become spaces and the commonest entities characters, so markup never joins or splits words.
    NEW.search_text := lower(concat_ws(' ', NEW.subject, NEW.summary,
        replace(replace(replace(regexp_replace(NEW.body, '<[^>]*>', ' ', 'g'), '&nbsp;', ' '), '&amp;', '&'), '&quot;', '"'),
        NEW.message_sender, owner));
    NEW.search_words := to_tsvector(search_config(NEW.language), NEW.search_text);
    RETURN NEW;
END $$;

CREATE TRIGGER messages_search BEFORE INSERT OR UPDATE OF subject, summary, body, message_sender, service_code, service_edition, language
    ON messages FOR EACH ROW EXECUTE FUNCTION messages_search_fill();

CREATE FUNCTION service_owner_renamed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE messages m SET language = m.language
    FROM services s
    WHERE s.service_owner_code = NEW.code AND m.service_code = s.service_code AND m.service_edition = s.service_edition;
    RETURN NULL;
END $$;

CREATE TRIGGER service_owners_search AFTER UPDATE OF name ON service_owners
    FOR EACH ROW WHEN (OLD.name IS DISTINCT FROM NEW.name) EXECUTE FUNCTION service_owner_renamed();

UPDATE messages SET language = language; -- fills the columns of the messages there are
