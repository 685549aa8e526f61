// Package pull drains a service owner's download queue into a folder, over the generated client: one
// folder per submission (its forms, attachments, print and manifest.json), every part checked against the
// SHA-256 the queue lists, and the submission confirmed only once its folder is synced to disk. A pull
// that stops (a crash, a lost connection) resumes where it stopped: a folder that is complete is only
// confirmed, one that is not is fetched again.
package pull

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/postbox/postbox/client"
)

// Puller drains the unconfirmed queue of the owner its client calls as.
type Puller struct {
	Client *client.ClientWithResponses
	Dir    string
	// Progress is told of each submission as it is stored and confirmed; nil: silent.
	Progress io.Writer
	// ServiceCode, when set, narrows the queue to one service.
	ServiceCode string
}

// Pull stores and confirms submissions until the unconfirmed queue is empty, and returns how many it
// confirmed.
func (p *Puller) Pull(ctx context.Context) (int, error) {
	if err := os.MkdirAll(p.Dir, 0o750); err != nil {
		return 0, err
	}
	confirmed := 0
	for {
		params := &client.ListSubmissionsParams{}
		if p.ServiceCode != "" {
			params.ServiceCode = &p.ServiceCode
		}
		page, err := p.Client.ListSubmissionsWithResponse(ctx, params)
		if err != nil {
			return confirmed, err
		}
		if page.HALJSON200 == nil {
			return confirmed, fmt.Errorf("listing the queue: %s: %s", page.Status(), page.Body)
		}
		subs := page.HALJSON200.UnderscoreEmbedded.Submissions
		if len(subs) == 0 {
			return confirmed, nil
		}
		// Confirmed submissions leave the unconfirmed queue, so the first page is always the next work.
		for _, s := range subs {
			if err := p.one(ctx, s); err != nil {
				return confirmed, fmt.Errorf("%s: %w", s.ArchiveReference, err)
			}
			confirmed++
		}
	}
}

// one stores submission s (unless a complete folder of it is there from before) and confirms it.
func (p *Puller) one(ctx context.Context, s client.Submission) error {
	final := filepath.Join(p.Dir, s.ArchiveReference)
	if _, err := os.Stat(filepath.Join(final, "manifest.json")); err == nil {
		p.report("%s: stored before, confirming\n", s.ArchiveReference)
	} else {
		if err := p.store(ctx, s, final); err != nil {
			return err
		}
	}
	r, err := p.Client.ConfirmSubmissionWithResponse(ctx, s.ArchiveReference, nil)
	if err != nil {
		return err
	}
	if r.StatusCode() != http.StatusOK {
		return fmt.Errorf("confirming: %s: %s", r.Status(), r.Body)
	}
	p.report("%s: %d forms, %d attachments, print: stored and confirmed\n", s.ArchiveReference, len(s.Forms), len(s.Attachments))
	return nil
}

// store downloads every part of s into a temporary folder, syncs it and renames it to final.
func (p *Puller) store(ctx context.Context, s client.Submission, final string) error {
	tmp := filepath.Join(p.Dir, "."+s.ArchiveReference+".partial")
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	ref := s.ArchiveReference
	for _, f := range s.Forms {
		id := strconv.Itoa(f.FormId)
		err := p.fetch(filepath.Join(tmp, "forms", id+".xml"), f.SHA256, func() (*http.Response, error) {
			return p.Client.GetSubmissionFormData(ctx, ref, id, nil)
		})
		if err != nil {
			return err
		}
	}
	for _, a := range s.Attachments {
		id := strconv.Itoa(a.AttachmentId)
		err := p.fetch(filepath.Join(tmp, "attachments", id, plainName(a.FileName)), a.SHA256, func() (*http.Response, error) {
			return p.Client.GetSubmissionAttachment(ctx, ref, id, nil)
		})
		if err != nil {
			return err
		}
	}
	err := p.fetch(filepath.Join(tmp, "print.pdf"), s.Print.SHA256, func() (*http.Response, error) {
		return p.Client.GetSubmissionPrint(ctx, ref, nil)
	})
	if err != nil {
		return err
	}
	manifest, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	// The manifest is written last: its presence marks a complete folder.
	if err := writeSynced(filepath.Join(tmp, "manifest.json"), strings.NewReader(string(manifest)), ""); err != nil {
		return err
	}
	if err := syncTree(tmp); err != nil {
		return err
	}
	if err := os.RemoveAll(final); err != nil {
		return err
	}
	if err := os.Rename(tmp, final); err != nil {
		return err
	}
	return syncDir(p.Dir)
}

// fetch stores the body of a download at path, failing unless it has the SHA-256 wantHex.
func (p *Puller) fetch(path, wantHex string, get func() (*http.Response, error)) error {
	resp, err := get()
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("downloading %s: %s: %s", filepath.Base(path), resp.Status, body)
	}
	return writeSynced(path, resp.Body, wantHex)
}

// writeSynced writes r to path and syncs it; with wantHex, it fails unless the bytes have that SHA-256.
func writeSynced(path string, r io.Reader, wantHex string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o640)
	if err != nil {
		return err
	}
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(f, h), r)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); wantHex != "" && got != wantHex {
		return fmt.Errorf("%s has SHA-256 %s, the queue lists %s", filepath.Base(path), got, wantHex)
	}
	return nil
}

// syncTree syncs every folder under root, so that the files' names are on disk too.
func syncTree(root string) error {
	return filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		return syncDir(path)
	})
}

func syncDir(path string) error {
	d, err := os.Open(path)
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.Join(err, d.Close())
}

// plainName keeps a file name to one path element.
func plainName(name string) string {
	name = filepath.Base(strings.ReplaceAll(name, "\\", "/"))
	if name == "." || name == ".." || name == "/" || name == "" {
		return "file"
	}
	return name
}

func (p *Puller) report(format string, args ...any) {
	if p.Progress != nil {
		fmt.Fprintf(p.Progress, format, args...)
	}
}
