-- dbio's TPC-C transactions for PostgreSQL (specification revision 5.11,
-- clause 2), one PL/pgSQL function each. The driver calls a function as a
-- single statement in autocommit mode, so each call is one transaction and one
-- round trip; an error raised inside rolls the whole transaction back.
--
-- SQLSTATE TPC01 is the intended New-Order rollback on an unused item
-- (2.4.2.3); TPC02 a by-name look-up that found no customer, which the
-- population rules make impossible.
--
-- Variables are prefixed v_ and outputs r_ so that none can be mistaken for a column.

-- New-Order (2.4.2). The lines arrive sorted by (supply warehouse, item), the
-- unused item of a rolled-back order last. Two statements do the work of
-- 2.4.2.2, whose reads and writes the specification lists but whose
-- statements it leaves to the implementation (the rules of 2.4.2 are on the
-- rows read and changed, not on how many statements change them): each
-- statement a PL/pgSQL function runs costs an executor start and end, which
-- were most of New-Order's server time when every line had its own.
CREATE OR REPLACE FUNCTION tpcc_new_order(
    p_w_id int, p_d_id int, p_c_id int, p_all_local int, p_entry_d timestamp,
    p_i_ids int[], p_supply_w_ids int[], p_quantities int[],
    OUT r_o_id int, OUT r_total float8, OUT r_amounts float8[], OUT r_brand_generic text)
LANGUAGE plpgsql AS $$
DECLARE
    v_n int := cardinality(p_i_ids);
    v_taxes numeric;
    v_c_discount numeric;
    v_done int;
    v_sum numeric;
    v_distinct boolean := true;
    v_amount numeric;
    v_dist char(24);
    v_bg text;
BEGIN
    -- D_NEXT_O_ID is read and incremented under the district row's lock,
    -- and the order and its NEW-ORDER row inserted with the new id; the
    -- warehouse's tax and the customer's discount, last name and credit
    -- are read by the same statement.
    WITH d AS (
        UPDATE district SET d_next_o_id = d_next_o_id + 1
            WHERE d_w_id = p_w_id AND d_id = p_d_id
            RETURNING d_tax, d_next_o_id - 1 AS o_id),
    o AS (
        INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
            SELECT o_id, p_d_id, p_w_id, p_c_id, p_entry_d, NULL, v_n, p_all_local FROM d),
    n AS (
        INSERT INTO new_order (no_o_id, no_d_id, no_w_id) SELECT o_id, p_d_id, p_w_id FROM d)
    SELECT d.o_id, w_tax + d.d_tax, c_discount INTO r_o_id, v_taxes, v_c_discount
        FROM d, warehouse, customer
        WHERE w_id = p_w_id AND c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;
    -- A stock row named by two lines is updated once per line: one UPDATE
    -- joined to both lines would change it once. Sorted lines put twins
    -- side by side.
    FOR i IN 2..v_n LOOP
        IF p_i_ids[i] = p_i_ids[i - 1] AND p_supply_w_ids[i] = p_supply_w_ids[i - 1] THEN
            v_distinct := false;
        END IF;
    END LOOP;
    IF v_distinct THEN
        -- Every line's item read and stock updated (2.4.2.2: restock by 91
        -- when fewer than 10 would remain) and order line inserted by one
        -- statement. The lines drive the join in their (key) order, so that
        -- stock rows are locked in it. An unused item number has no row.
        WITH l AS (
            SELECT * FROM unnest(p_i_ids, p_supply_w_ids, p_quantities) WITH ORDINALITY AS l(l_i_id, l_w_id, l_qty, l_n)),
        s AS (
            UPDATE stock SET
                s_quantity = CASE WHEN s_quantity >= l_qty + 10 THEN s_quantity - l_qty ELSE s_quantity - l_qty + 91 END,
                s_ytd = s_ytd + l_qty,
                s_order_cnt = s_order_cnt + 1,
                s_remote_cnt = s_remote_cnt + CASE WHEN l_w_id <> p_w_id THEN 1 ELSE 0 END
            FROM l JOIN item ON i_id = l_i_id
            WHERE s_w_id = l_w_id AND s_i_id = l_i_id
            RETURNING l_n, l_i_id, l_w_id, l_qty, round(l_qty * i_price, 2) AS amount,
                CASE p_d_id WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04
                            WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08
                            WHEN 9 THEN s_dist_09 ELSE s_dist_10 END AS dist,
                CASE WHEN strpos(i_data, 'ORIGINAL') > 0 AND strpos(s_data, 'ORIGINAL') > 0 THEN 'B' ELSE 'G' END AS bg),
        ol AS (
            INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
                                    ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
                SELECT r_o_id, p_d_id, p_w_id, s.l_n, s.l_i_id, s.l_w_id, NULL, s.l_qty, s.amount, s.dist FROM s)
        SELECT count(*), sum(amount), array_agg(amount::float8 ORDER BY l_n), string_agg(bg, '' ORDER BY l_n)
            INTO v_done, v_sum, r_amounts, r_brand_generic FROM s;
    ELSE
        -- Rare (about one order in 2,000): one line at a time.
        v_done := 0;
        v_sum := 0;
        r_amounts := '{}';
        r_brand_generic := '';
        FOR i IN 1..v_n LOOP
            UPDATE stock SET
                s_quantity = CASE WHEN s_quantity >= p_quantities[i] + 10 THEN s_quantity - p_quantities[i]
                                  ELSE s_quantity - p_quantities[i] + 91 END,
                s_ytd = s_ytd + p_quantities[i],
                s_order_cnt = s_order_cnt + 1,
                s_remote_cnt = s_remote_cnt + CASE WHEN p_supply_w_ids[i] <> p_w_id THEN 1 ELSE 0 END
            FROM item
            WHERE i_id = p_i_ids[i] AND s_w_id = p_supply_w_ids[i] AND s_i_id = p_i_ids[i]
            RETURNING round(p_quantities[i] * i_price, 2),
                CASE p_d_id WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04
                            WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08
                            WHEN 9 THEN s_dist_09 ELSE s_dist_10 END,
                CASE WHEN strpos(i_data, 'ORIGINAL') > 0 AND strpos(s_data, 'ORIGINAL') > 0 THEN 'B' ELSE 'G' END
            INTO v_amount, v_dist, v_bg;
            EXIT WHEN NOT FOUND;
            INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
                                    ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
                VALUES (r_o_id, p_d_id, p_w_id, i, p_i_ids[i], p_supply_w_ids[i], NULL, p_quantities[i], v_amount, v_dist);
            v_done := v_done + 1;
            v_sum := v_sum + v_amount;
            r_amounts[i] := v_amount;
            r_brand_generic := r_brand_generic || v_bg;
        END LOOP;
    END IF;
    IF v_done < v_n THEN
        -- 2.4.2.3: "Item number is not valid"; the exception rolls the
        -- whole transaction back, the lines' work included.
        RAISE EXCEPTION 'new-order rolled back: an item is unused' USING ERRCODE = 'TPC01';
    END IF;
    r_total := round(v_sum * (1 - v_c_discount) * (1 + v_taxes), 2);
END
$$;

-- Payment (2.5.2). p_c_last is NULL when the customer is selected by id.
-- One statement: the warehouse, the district and the customer are updated
-- and the history row inserted by the parts of one WITH, which lock the
-- three rows in the same order at every call. What only the terminal
-- displays (names, addresses, phone, since, credit limit, discount) is
-- still read, by the updates' RETURNING as 2.5.2.2 reads it, and not passed
-- on to the driver, which shows nothing.
CREATE OR REPLACE FUNCTION tpcc_payment(
    p_w_id int, p_d_id int, p_c_w_id int, p_c_d_id int, p_c_id int, p_c_last varchar,
    p_amount numeric, p_date timestamp,
    OUT r_c_id int, OUT r_c_credit char(2), OUT r_c_balance float8, OUT r_c_data varchar)
LANGUAGE plpgsql AS $$
BEGIN
    WITH w AS (
        UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w_id
            RETURNING w_name, w_street_1, w_street_2, w_city, w_state, w_zip),
    d AS (
        UPDATE district SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w_id AND d_id = p_d_id
            RETURNING d_name, d_street_1, d_street_2, d_city, d_state, d_zip),
    -- By last name: the customer at position ceil(n/2) of those with that
    -- last name, sorted by first name (2.5.2.2).
    k AS (
        SELECT CASE WHEN p_c_last IS NULL THEN p_c_id ELSE (
            SELECT (array_agg(c_id ORDER BY c_first))[(count(*) + 1) / 2]
                FROM customer WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_last = p_c_last) END AS c_id),
    -- A bad-credit customer's C_DATA gets the payment's details in front, kept to 500 characters.
    c AS (
        UPDATE customer SET
            c_balance = c_balance - p_amount,
            c_ytd_payment = c_ytd_payment + p_amount,
            c_payment_cnt = c_payment_cnt + 1,
            c_data = CASE WHEN c_credit = 'BC'
                          THEN left(customer.c_id || ' ' || p_c_d_id || ' ' || p_c_w_id || ' ' || p_d_id || ' ' || p_w_id || ' ' ||
                                    p_amount::numeric(12,2) || ' | ' || c_data, 500)
                          ELSE c_data END
            FROM k
            WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND customer.c_id = k.c_id
            RETURNING customer.c_id, c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since,
                      c_credit, c_credit_lim, c_discount, c_balance, CASE WHEN c_credit = 'BC' THEN left(c_data, 200) END AS c_data),
    -- H_DATA is W_NAME and D_NAME separated by four spaces.
    h AS (
        INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
            SELECT c.c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, p_date, p_amount, w_name || '    ' || d_name FROM c, w, d)
    SELECT c.c_id, c.c_credit, c.c_balance, c.c_data INTO r_c_id, r_c_credit, r_c_balance, r_c_data FROM c, w, d;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no customer named % in warehouse % district %', p_c_last, p_c_w_id, p_c_d_id USING ERRCODE = 'TPC02';
    END IF;
END
$$;

-- Order-Status (2.6.2). STABLE: every statement reads the snapshot taken at
-- the call, so the customer, the order and its lines are seen consistently.
-- One statement: the customer (by id, or the one at position ceil(n/2) of
-- those with the last name, by first name), the customer's most recent
-- order and that order's lines.
CREATE OR REPLACE FUNCTION tpcc_order_status(
    p_w_id int, p_d_id int, p_c_id int, p_c_last varchar,
    OUT r_c_id int, OUT r_c_balance float8, OUT r_c_first varchar, OUT r_c_middle char(2), OUT r_c_last varchar,
    OUT r_o_id int, OUT r_o_entry_d timestamp, OUT r_o_carrier_id int,
    OUT r_ol_i_ids int[], OUT r_ol_supply_w_ids int[], OUT r_ol_quantities int[], OUT r_ol_amounts float8[],
    OUT r_ol_delivery_ds timestamp[])
LANGUAGE plpgsql STABLE AS $$
BEGIN
    SELECT c.c_id, c.c_balance, c.c_first, c.c_middle, c.c_last, o.o_id, o.o_entry_d, o.o_carrier_id,
           l.i_ids, l.supply_w_ids, l.quantities, l.amounts, l.delivery_ds
        INTO r_c_id, r_c_balance, r_c_first, r_c_middle, r_c_last, r_o_id, r_o_entry_d, r_o_carrier_id,
             r_ol_i_ids, r_ol_supply_w_ids, r_ol_quantities, r_ol_amounts, r_ol_delivery_ds
        FROM customer c
        LEFT JOIN LATERAL (
            SELECT o_id, o_entry_d, o_carrier_id FROM orders
                WHERE o_w_id = p_w_id AND o_d_id = p_d_id AND o_c_id = c.c_id
                ORDER BY o_id DESC LIMIT 1) o ON true
        LEFT JOIN LATERAL (
            SELECT array_agg(ol_i_id ORDER BY ol_number) AS i_ids, array_agg(ol_supply_w_id ORDER BY ol_number) AS supply_w_ids,
                   array_agg(ol_quantity ORDER BY ol_number) AS quantities, array_agg(ol_amount::float8 ORDER BY ol_number) AS amounts,
                   array_agg(ol_delivery_d ORDER BY ol_number) AS delivery_ds
                FROM order_line WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id = o.o_id) l ON true
        WHERE c.c_w_id = p_w_id AND c.c_d_id = p_d_id AND c.c_id = CASE WHEN p_c_last IS NULL THEN p_c_id ELSE (
            SELECT (array_agg(c_id ORDER BY c_first))[(count(*) + 1) / 2]
                FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_c_last) END;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no customer named % in warehouse % district %', p_c_last, p_w_id, p_d_id USING ERRCODE = 'TPC02';
    END IF;
END
$$;

-- Delivery (2.7.4): the ten districts of a warehouse in one transaction
-- and one statement. 2.7.4.2 has each district's oldest undelivered order
-- taken off NEW-ORDER, its carrier set, its lines' delivery date set and
-- summed, and its customer credited: the parts of one WITH, each reading
-- the rows the one before it returned. The districts are taken in order,
-- each order's NEW-ORDER row locked as it is found; a concurrent Delivery
-- that took one first makes the lock skip to the district's next order.
-- A district without one is skipped (2.7.4.2).
CREATE OR REPLACE FUNCTION tpcc_delivery(
    p_w_id int, p_carrier_id int, p_date timestamp,
    OUT r_delivered int, OUT r_skipped int)
LANGUAGE plpgsql AS $$
BEGIN
    WITH n AS (
        DELETE FROM new_order USING (
            SELECT d_id, x.no_o_id FROM generate_series(1, 10) AS d_id,
            LATERAL (SELECT no_o_id FROM new_order WHERE no_w_id = p_w_id AND no_d_id = d_id
                         ORDER BY no_o_id LIMIT 1 FOR UPDATE) x) oldest
            WHERE no_w_id = p_w_id AND no_d_id = oldest.d_id AND new_order.no_o_id = oldest.no_o_id
            RETURNING no_d_id, new_order.no_o_id),
    o AS (
        UPDATE orders SET o_carrier_id = p_carrier_id FROM n
            WHERE o_w_id = p_w_id AND o_d_id = n.no_d_id AND o_id = n.no_o_id
            RETURNING o_d_id, o_c_id),
    l AS (
        UPDATE order_line SET ol_delivery_d = p_date FROM n
            WHERE ol_w_id = p_w_id AND ol_d_id = n.no_d_id AND ol_o_id = n.no_o_id
            RETURNING ol_d_id, ol_amount),
    c AS (
        UPDATE customer SET c_balance = c_balance + coalesce(t.total, 0), c_delivery_cnt = c_delivery_cnt + 1
            FROM o LEFT JOIN (SELECT ol_d_id, sum(ol_amount) AS total FROM l GROUP BY ol_d_id) t ON t.ol_d_id = o.o_d_id
            WHERE c_w_id = p_w_id AND c_d_id = o.o_d_id AND c_id = o.o_c_id
            RETURNING 1)
    SELECT count(*) INTO r_delivered FROM n;
    r_skipped := 10 - r_delivered;
END
$$;

-- Stock-Level (2.8.2): distinct items of the district's last 20 orders whose
-- stock is below the threshold. D_NEXT_O_ID is read first and the range
-- passed to the count as values. With the district joined into the count,
-- the planner's estimate of the order lines in range came from the
-- district's statistics, which the dead versions New-Order and Payment leave
-- behind throw off: on a 10-warehouse database after a few runs it expected
-- 176,607 lines instead of 200 and hashed the warehouse's whole stock, 59 ms
-- and 4,970 buffers a call instead of 1.7 ms and 784 by key. With values,
-- both the generic and the custom plans go by key. STABLE: both statements
-- read the calling query's one snapshot, as the one statement did.
CREATE OR REPLACE FUNCTION tpcc_stock_level(p_w_id int, p_d_id int, p_threshold int, OUT r_low_stock int)
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_next int;
BEGIN
    SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
    SELECT count(DISTINCT s_i_id) INTO r_low_stock
        FROM order_line
        JOIN stock ON s_w_id = p_w_id AND s_i_id = ol_i_id
        WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id >= v_next - 20 AND ol_o_id < v_next
          AND s_quantity < p_threshold;
END
$$;
