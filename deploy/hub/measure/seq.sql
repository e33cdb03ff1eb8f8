SELECT value FROM hub_meta WHERE key = 'sequence';
