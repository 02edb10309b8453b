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
-- unused item of a rolled-back order last.
CREATE OR REPLACE FUNCTION tpcc_new_order(
    p_w_id int, p_d_id int, p_c_id int, p_all_local int, p_entry_d timestamp,
    p_i_ids int[], p_supply_w_ids int[], p_quantities int[],
    OUT r_o_id int, OUT r_total float8, OUT r_amounts float8[], OUT r_brand_generic text)
LANGUAGE plpgsql AS $$
DECLARE
    v_n int := cardinality(p_i_ids);
    v_w_tax numeric;
    v_d_tax numeric;
    v_c_discount numeric;
    v_c_last varchar;
    v_c_credit char(2);
    v_price numeric;
    v_i_name varchar;
    v_i_data varchar;
    v_s_data varchar;
    v_dist char(24);
    v_amount numeric;
    v_sum numeric := 0;
    v_dist_infos char(24)[] := '{}';
    v_line_amounts numeric[] := '{}';
BEGIN
    SELECT w_tax INTO v_w_tax FROM warehouse WHERE w_id = p_w_id;
    -- D_NEXT_O_ID is read and incremented under the district row's lock.
    UPDATE district SET d_next_o_id = d_next_o_id + 1
        WHERE d_w_id = p_w_id AND d_id = p_d_id
        RETURNING d_tax, d_next_o_id - 1 INTO v_d_tax, r_o_id;
    SELECT c_discount, c_last, c_credit INTO v_c_discount, v_c_last, v_c_credit
        FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;
    INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
        VALUES (r_o_id, p_d_id, p_w_id, p_c_id, p_entry_d, NULL, v_n, p_all_local);
    INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (r_o_id, p_d_id, p_w_id);
    r_brand_generic := '';
    r_amounts := '{}';
    FOR i IN 1..v_n LOOP
        -- One statement reads the item and its stock and updates the stock
        -- (2.4.2.2: restock by 91 when fewer than 10 would remain). No row
        -- means the item number is unused (2.4.2.3).
        UPDATE stock SET
            s_quantity = CASE WHEN s_quantity >= p_quantities[i] + 10 THEN s_quantity - p_quantities[i]
                              ELSE s_quantity - p_quantities[i] + 91 END,
            s_ytd = s_ytd + p_quantities[i],
            s_order_cnt = s_order_cnt + 1,
            s_remote_cnt = s_remote_cnt + CASE WHEN p_supply_w_ids[i] <> p_w_id THEN 1 ELSE 0 END
        FROM item
        WHERE i_id = p_i_ids[i] AND s_w_id = p_supply_w_ids[i] AND s_i_id = p_i_ids[i]
        RETURNING i_price, i_name, i_data, s_data,
            CASE p_d_id WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04
                        WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08
                        WHEN 9 THEN s_dist_09 ELSE s_dist_10 END
        INTO v_price, v_i_name, v_i_data, v_s_data, v_dist;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'new-order rolled back: item % is unused', p_i_ids[i] USING ERRCODE = 'TPC01';
        END IF;
        v_amount := round(p_quantities[i] * v_price, 2);
        v_dist_infos[i] := v_dist;
        v_line_amounts[i] := v_amount;
        r_amounts[i] := v_amount;
        v_sum := v_sum + v_amount;
        r_brand_generic := r_brand_generic ||
            CASE WHEN strpos(v_i_data, 'ORIGINAL') > 0 AND strpos(v_s_data, 'ORIGINAL') > 0 THEN 'B' ELSE 'G' END;
    END LOOP;
    -- Every line is valid: insert them in one statement.
    INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
                            ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
        SELECT r_o_id, p_d_id, p_w_id, n, p_i_ids[n], p_supply_w_ids[n], NULL, p_quantities[n],
               v_line_amounts[n], v_dist_infos[n]
        FROM generate_series(1, v_n) AS n;
    r_total := round(v_sum * (1 - v_c_discount) * (1 + v_w_tax + v_d_tax), 2);
END
$$;

-- Payment (2.5.2). p_c_last is NULL when the customer is selected by id.
CREATE OR REPLACE FUNCTION tpcc_payment(
    p_w_id int, p_d_id int, p_c_w_id int, p_c_d_id int, p_c_id int, p_c_last varchar,
    p_amount numeric, p_date timestamp,
    OUT r_c_id int, OUT r_c_credit char(2), OUT r_c_balance float8, OUT r_c_data varchar)
LANGUAGE plpgsql AS $$
DECLARE
    v_w_name varchar; v_w_street_1 varchar; v_w_street_2 varchar; v_w_city varchar; v_w_state char(2); v_w_zip char(9);
    v_d_name varchar; v_d_street_1 varchar; v_d_street_2 varchar; v_d_city varchar; v_d_state char(2); v_d_zip char(9);
    v_c_first varchar; v_c_middle char(2); v_c_last varchar; v_c_street_1 varchar; v_c_street_2 varchar;
    v_c_city varchar; v_c_state char(2); v_c_zip char(9); v_c_phone char(16); v_c_since timestamp;
    v_c_credit_lim numeric; v_c_discount numeric;
    v_ids int[];
    v_n int;
BEGIN
    UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w_id
        RETURNING w_name, w_street_1, w_street_2, w_city, w_state, w_zip
        INTO v_w_name, v_w_street_1, v_w_street_2, v_w_city, v_w_state, v_w_zip;
    UPDATE district SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w_id AND d_id = p_d_id
        RETURNING d_name, d_street_1, d_street_2, d_city, d_state, d_zip
        INTO v_d_name, v_d_street_1, v_d_street_2, v_d_city, v_d_state, v_d_zip;
    r_c_id := p_c_id;
    IF p_c_last IS NOT NULL THEN
        -- The customer at position ceil(n/2) of those with that last name, by first name.
        SELECT array_agg(c_id ORDER BY c_first) INTO v_ids
            FROM customer WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_last = p_c_last;
        v_n := cardinality(v_ids);
        IF v_n IS NULL THEN
            RAISE EXCEPTION 'no customer named % in warehouse % district %', p_c_last, p_c_w_id, p_c_d_id USING ERRCODE = 'TPC02';
        END IF;
        r_c_id := v_ids[(v_n + 1) / 2];
    END IF;
    -- A bad-credit customer's C_DATA gets the payment's details in front, kept to 500 characters.
    UPDATE customer SET
        c_balance = c_balance - p_amount,
        c_ytd_payment = c_ytd_payment + p_amount,
        c_payment_cnt = c_payment_cnt + 1,
        c_data = CASE WHEN c_credit = 'BC'
                      THEN left(r_c_id || ' ' || p_c_d_id || ' ' || p_c_w_id || ' ' || p_d_id || ' ' || p_w_id || ' ' ||
                                p_amount::numeric(12,2) || ' | ' || c_data, 500)
                      ELSE c_data END
        WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = r_c_id
        RETURNING c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since,
                  c_credit, c_credit_lim, c_discount, c_balance, CASE WHEN c_credit = 'BC' THEN left(c_data, 200) END
        INTO v_c_first, v_c_middle, v_c_last, v_c_street_1, v_c_street_2, v_c_city, v_c_state, v_c_zip, v_c_phone, v_c_since,
             r_c_credit, v_c_credit_lim, v_c_discount, r_c_balance, r_c_data;
    -- H_DATA is W_NAME and D_NAME separated by four spaces.
    INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
        VALUES (r_c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, p_date, p_amount, v_w_name || '    ' || v_d_name);
END
$$;

-- Order-Status (2.6.2). STABLE: every statement reads the snapshot taken at
-- the call, so the customer, the order and its lines are seen consistently.
CREATE OR REPLACE FUNCTION tpcc_order_status(
    p_w_id int, p_d_id int, p_c_id int, p_c_last varchar,
    OUT r_c_id int, OUT r_c_balance float8, OUT r_c_first varchar, OUT r_c_middle char(2), OUT r_c_last varchar,
    OUT r_o_id int, OUT r_o_entry_d timestamp, OUT r_o_carrier_id int,
    OUT r_ol_i_ids int[], OUT r_ol_supply_w_ids int[], OUT r_ol_quantities int[], OUT r_ol_amounts float8[],
    OUT r_ol_delivery_ds timestamp[])
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_ids int[];
    v_n int;
BEGIN
    r_c_id := p_c_id;
    IF p_c_last IS NOT NULL THEN
        SELECT array_agg(c_id ORDER BY c_first) INTO v_ids
            FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_c_last;
        v_n := cardinality(v_ids);
        IF v_n IS NULL THEN
            RAISE EXCEPTION 'no customer named % in warehouse % district %', p_c_last, p_w_id, p_d_id USING ERRCODE = 'TPC02';
        END IF;
        r_c_id := v_ids[(v_n + 1) / 2];
    END IF;
    SELECT c_balance, c_first, c_middle, c_last INTO r_c_balance, r_c_first, r_c_middle, r_c_last
        FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = r_c_id;
    -- The customer's most recent order.
    SELECT o_id, o_entry_d, o_carrier_id INTO r_o_id, r_o_entry_d, r_o_carrier_id
        FROM orders WHERE o_w_id = p_w_id AND o_d_id = p_d_id AND o_c_id = r_c_id
        ORDER BY o_id DESC LIMIT 1;
    IF NOT FOUND THEN
        RETURN; -- possible only after manual changes: nothing to show
    END IF;
    SELECT array_agg(ol_i_id ORDER BY ol_number), array_agg(ol_supply_w_id ORDER BY ol_number),
           array_agg(ol_quantity ORDER BY ol_number), array_agg(ol_amount::float8 ORDER BY ol_number),
           array_agg(ol_delivery_d ORDER BY ol_number)
        INTO r_ol_i_ids, r_ol_supply_w_ids, r_ol_quantities, r_ol_amounts, r_ol_delivery_ds
        FROM order_line WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id = r_o_id;
END
$$;

-- Delivery (2.7.4): the ten districts of a warehouse in one transaction.
CREATE OR REPLACE FUNCTION tpcc_delivery(
    p_w_id int, p_carrier_id int, p_date timestamp,
    OUT r_delivered int, OUT r_skipped int)
LANGUAGE plpgsql AS $$
DECLARE
    v_o_id int;
    v_c_id int;
    v_total numeric;
BEGIN
    r_delivered := 0;
    r_skipped := 0;
    FOR v_d_id IN 1..10 LOOP
        -- The district's oldest undelivered order. A concurrent Delivery that
        -- took it first makes the lock skip to the next one.
        SELECT no_o_id INTO v_o_id FROM new_order
            WHERE no_w_id = p_w_id AND no_d_id = v_d_id
            ORDER BY no_o_id LIMIT 1 FOR UPDATE;
        IF NOT FOUND THEN
            r_skipped := r_skipped + 1; -- 2.7.4.2: no outstanding order in this district
            CONTINUE;
        END IF;
        DELETE FROM new_order WHERE no_w_id = p_w_id AND no_d_id = v_d_id AND no_o_id = v_o_id;
        UPDATE orders SET o_carrier_id = p_carrier_id
            WHERE o_w_id = p_w_id AND o_d_id = v_d_id AND o_id = v_o_id
            RETURNING o_c_id INTO v_c_id;
        WITH delivered AS (
            UPDATE order_line SET ol_delivery_d = p_date
                WHERE ol_w_id = p_w_id AND ol_d_id = v_d_id AND ol_o_id = v_o_id
                RETURNING ol_amount)
        SELECT sum(ol_amount) INTO v_total FROM delivered;
        UPDATE customer SET c_balance = c_balance + coalesce(v_total, 0), c_delivery_cnt = c_delivery_cnt + 1
            WHERE c_w_id = p_w_id AND c_d_id = v_d_id AND c_id = v_c_id;
        r_delivered := r_delivered + 1;
    END LOOP;
END
$$;

-- Stock-Level (2.8.2): distinct items of the district's last 20 orders whose
-- stock is below the threshold. STABLE: one snapshot for both reads.
CREATE OR REPLACE FUNCTION tpcc_stock_level(p_w_id int, p_d_id int, p_threshold int, OUT r_low_stock int)
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_next int;
BEGIN
    SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
    SELECT count(DISTINCT s_i_id) INTO r_low_stock
        FROM order_line JOIN stock ON s_w_id = p_w_id AND s_i_id = ol_i_id
        WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id >= v_next - 20 AND ol_o_id < v_next
          AND s_quantity < p_threshold;
END
$$;
