from django.db import migrations

from memento.rls import rls_drop_sql, rls_policy_sql

TABLES = ["conversations_conversation", "conversations_message"]


class Migration(migrations.Migration):
    dependencies = [("conversations", "0002_initial")]

    operations = [
        migrations.RunSQL(rls_policy_sql(table), reverse_sql=rls_drop_sql(table)) for table in TABLES
    ]
