// Walks a project's units of one kind in id order (audit construction_loss: messages), so a page
// stops after the units it needs instead of sorting every one of that kind first.
// $params: none
CREATE INDEX unit_kind_id IF NOT EXISTS FOR (u:Unit) ON (u.project, u.kind, u.id)
