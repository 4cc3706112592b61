from django.db import migrations

from memento.rls import rls_drop_sql, rls_policy_sql


class Migration(migrations.Migration):
    dependencies = [("store", "0001_initial")]

    operations = [migrations.RunSQL(rls_policy_sql("store_itemvector"), reverse_sql=rls_drop_sql("store_itemvector"))]
