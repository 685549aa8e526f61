package main

// The worker command: what `postbox worker` (and `postbox dev`) runs of the Temporal workers.

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/postbox/postbox/config"
	"github.com/postbox/postbox/events/webhook"
	"github.com/postbox/postbox/notification"
	"github.com/postbox/postbox/retention"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/worker"
)

func runWorker(ctx context.Context, cfg config.Config, log *slog.Logger) error {
	if err := cfg.RequirePublicURL(); err != nil {
		return err
	}
	return run(ctx, cfg, log, "postbox-worker", serveWorker)
}

// serveWorker waits for the database, then for Temporal (registering the search attributes and the
// schedules of the trashbin purge, the retention and the object store's sweep), and runs the workers.
func serveWorker(ctx context.Context, svc *services) error {
	cfg := svc.cfg
	if err := svc.startup.waitForDatabase(ctx, svc.pool); err != nil {
		return err
	}
	if err := svc.startup.waitFor(ctx, "temporal", func(ctx context.Context) error {
		if err := worker.RegisterSearchAttributes(ctx, svc.temporal, cfg.TemporalNamespace); err != nil {
			return err
		}
		if err := worker.EnsureTrashbinPurgeSchedule(ctx, svc.temporal, cfg.TrashbinRetention); err != nil {
			return err
		}
		if err := worker.EnsureRetentionSchedule(ctx, svc.temporal, retention.Input{EventsMonths: cfg.EventsRetentionMonths,
			AuditMonths: cfg.AuditRetentionMonths}); err != nil {
			return err
		}
		return worker.EnsureFilesSweepSchedule(ctx, svc.temporal, cfg.FilesSweepGrace)
	}); err != nil {
		return err
	}
	webhooks, err := webhookOptions(cfg)
	if err != nil {
		return err
	}
	webhooks.Listen = svc.listen
	// The events workers, which open the secrets, seal anew those stored before they were sealed or under
	// a key older than the newest.
	if slices.Contains(cfg.WorkerQueues, config.QueueEvents) {
		if n, err := webhook.Reseal(ctx, webhook.NewStore(store.New(svc.pool)), webhooks.Sealer); err != nil {
			return fmt.Errorf("sealing webhook secrets: %w", err)
		} else if n > 0 {
			svc.log.Info("sealed webhook secrets with the newest key", "count", n)
		}
	}
	opts := workerOptions(cfg)
	opts.Files = svc.files
	return worker.Serve(ctx, svc.temporal, svc.pool, opts, webhooks, svc.log)
}

func workerOptions(cfg config.Config) worker.Options {
	return worker.Options{
		Queues:                     cfg.WorkerQueues,
		MaxConcurrentActivities:    cfg.WorkerMaxActivities,
		MaxConcurrentWorkflowTasks: cfg.WorkerMaxWorkflowTasks,
		StopTimeout:                cfg.ShutdownTimeout,
		PublicURL:                  cfg.PublicURL,
		SMTP: notification.SMTPConfig{Addr: cfg.SMTPAddr, Username: cfg.SMTPUsername, Password: cfg.SMTPPassword, TLS: cfg.SMTPTLS,
			From: cfg.SMTPFrom, Connections: cfg.SMTPConnections, Rate: float64(cfg.SMTPRate)},
		SMS: notification.SMSConfig{URL: cfg.SMSURL, Account: cfg.SMSAccount, Token: cfg.SMSToken, From: cfg.SMSFrom,
			Rate: float64(cfg.SMSRate)},
	}
}

// notificationChannels are the channels the workers of cfg send on, as the API checks orders against.
func notificationChannels(cfg config.Config) notification.Configured {
	return notification.Configured{Email: cfg.SMTPAddr != "", Sms: cfg.SMSURL != ""}
}

func webhookOptions(cfg config.Config) (webhook.Options, error) {
	sealer, err := webhook.NewSealer(cfg.WebhookSealKeys)
	return webhook.Options{AllowPrivate: cfg.WebhookAllowPrivate, PublicURL: cfg.PublicURL, Sealer: sealer, Policy: webhook.Policy{
		Retries: cfg.WebhookRetries, PauseAfter: cfg.WebhookPauseAfter, AttemptTimeout: cfg.WebhookTimeout, IdleCheck: webhook.IdleCheck}}, err
}
