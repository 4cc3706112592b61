from django.db import migrations

# Written out here, not imported, so that no later code change alters what this migration did.
#
# 1. This app's tables: end users are their app account's rows; audit lines are read by the user they concern,
#    and anyone may add one (a refused token has no user yet; lines are inserted without RETURNING, which would
#    need them to be readable).
# 2. A token bound to a project and/or an agent binds the session to them too (`memento.project_id`,
#    `memento.agent_id`: core/rls.py), and the tables whose rows belong to a project or an agent show only those:
#    memories (and their versions), conversations and their messages, documents and their chunks, store vectors.
#
# The rule keeps the planner's estimate of the owner-only rule (memories migration 0015): the owner test is still
# one int8eq call, estimated at a flat third, and the scope test sits inside its argument (a CASE giving the bound
# user only for a row in scope), where it changes no estimate. Unconfined sessions pay two setting look-ups a row.
ROLE = "memento_maintenance"
FUNCTIONS = f"""
CREATE OR REPLACE FUNCTION memento_bypassing() RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT current_setting('memento.rls_bypass', true) = 'on' AND pg_has_role(current_user, '{ROLE}', 'MEMBER')
$$;
CREATE OR REPLACE FUNCTION memento_bound_user() RETURNS bigint LANGUAGE sql STABLE AS $$
    SELECT nullif(current_setting('memento.user_id', true), '')::bigint
$$;
CREATE OR REPLACE FUNCTION memento_unconfined() RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT coalesce(current_setting('memento.project_id', true), '') = ''
       AND coalesce(current_setting('memento.agent_id', true), '') = ''
$$;
CREATE OR REPLACE FUNCTION memento_in_scope(project bigint, agent text) RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT (coalesce(current_setting('memento.project_id', true), '') = ''
            OR int8eq(project, nullif(current_setting('memento.project_id', true), '')::bigint))
       AND (coalesce(current_setting('memento.agent_id', true), '') = ''
            OR texteq(agent, current_setting('memento.agent_id', true)))
$$;
"""
DROP_FUNCTIONS = """
DROP FUNCTION memento_in_scope(bigint, text); DROP FUNCTION memento_unconfined();
DROP FUNCTION memento_bound_user(); DROP FUNCTION memento_bypassing();
"""


def scoped(in_scope: str) -> str:
    return f"memento_bypassing() OR int8eq(owner_id, CASE WHEN {in_scope} THEN memento_bound_user() END)"


def child_of(parent: str, column: str) -> str:
    """In scope when the session is unconfined or the parent row is visible (its own policy confines it)."""
    return f"memento_unconfined() OR EXISTS (SELECT 1 FROM {parent} p WHERE p.id = {column})"


# Documents belong to no agent: a token bound to an agent sees none (NULL is in no agent's scope).
SCOPED = {
    "memories_memory": scoped("memento_in_scope(project_id, agent_id)"),
    "memories_memoryhistory": scoped("memento_in_scope(project_id, agent_id)"),
    "conversations_conversation": scoped("memento_in_scope(project_id, agent_id)"),
    "conversations_message": scoped(child_of("conversations_conversation", "conversation_id")),
    "documents_document": scoped("memento_in_scope(project_id, NULL)"),
    "documents_chunk": scoped(child_of("documents_document", "document_id")),
    "store_itemvector": scoped(child_of("memories_memory", "memory_id")),
}


def policy(table: str, rule: str) -> str:
    return f"ALTER POLICY owner_only ON {table} USING ({rule}) WITH CHECK ({rule});"


OWN_TABLES = f"""
ALTER TABLE accounts_enduser ENABLE ROW LEVEL SECURITY;
ALTER TABLE accounts_enduser FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_only ON accounts_enduser
    USING (memento_owner_visible(owner_id)) WITH CHECK (memento_owner_visible(owner_id));
ALTER TABLE accounts_authevent ENABLE ROW LEVEL SECURITY;
ALTER TABLE accounts_authevent FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_only ON accounts_authevent
    USING (memento_owner_visible(user_id)) WITH CHECK (memento_owner_visible(user_id));
CREATE POLICY anyone_adds ON accounts_authevent FOR INSERT WITH CHECK (true);
"""
DROP_OWN_TABLES = """
DROP POLICY anyone_adds ON accounts_authevent; DROP POLICY owner_only ON accounts_authevent;
ALTER TABLE accounts_authevent NO FORCE ROW LEVEL SECURITY; ALTER TABLE accounts_authevent DISABLE ROW LEVEL SECURITY;
DROP POLICY owner_only ON accounts_enduser;
ALTER TABLE accounts_enduser NO FORCE ROW LEVEL SECURITY; ALTER TABLE accounts_enduser DISABLE ROW LEVEL SECURITY;
"""


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_initial"),
        ("memories", "0017_valid_time"),
        ("conversations", "0008_owner_visible"),
        ("documents", "0007_owner_visible"),
        ("store", "0005_owner_visible"),
    ]

    operations = [
        migrations.RunSQL(OWN_TABLES, reverse_sql=DROP_OWN_TABLES),
        migrations.RunSQL(FUNCTIONS, reverse_sql=DROP_FUNCTIONS),
        *(migrations.RunSQL(policy(table, rule), reverse_sql=policy(table, "memento_owner_visible(owner_id)"))
          for table, rule in SCOPED.items()),
    ]
