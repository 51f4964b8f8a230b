/** Webhook notifications of `drainbridge run` (docs/notifications.md). */
export { NOTIFICATION_EVENTS, type Notification, type NotificationEvent, summaryOf } from './message.ts';
export { WebhookSender } from './sender.ts';
export { loadWebhookSettings, NOTIFY_SETTINGS, type WebhookSettings } from './settings.ts';
export { ADMISSION_PAUSED, ADMISSION_RESUMED, NotificationSubscription, type ObservedTask } from './subscription.ts';
export { presetOrTemplate, renderTemplate, type WebhookTemplate } from './template.ts';
