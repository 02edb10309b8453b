-- dbio's TPC-C transactions for MariaDB and MySQL (specification revision
-- 5.11, clause 2), one stored procedure each. A procedure is one transaction
-- (START TRANSACTION ... COMMIT inside) and one round trip: its outputs come
-- back as result sets. Any error rolls the transaction back before it is
-- passed on, so a lock wait timeout never leaves a transaction open.
--
-- MYSQL_ERRNO 31001 is the intended New-Order rollback on an unused item
-- (2.4.2.3); 31002 a by-name look-up that found no customer, which the
-- population rules make impossible.
--
-- Statements are separated by lines holding only "//". Variables are
-- prefixed v_ so that none can be mistaken for a column.

-- Line numbers 1 to 15, to insert a New-Order's lines in one statement.
CREATE TABLE IF NOT EXISTS tpcc_line_no (n INT NOT NULL PRIMARY KEY) ENGINE=InnoDB
//
INSERT IGNORE INTO tpcc_line_no (n) VALUES (1), (2), (3), (4), (5), (6), (7), (8), (9), (10), (11), (12), (13), (14), (15)
//
DROP PROCEDURE IF EXISTS tpcc_new_order
//
-- New-Order (2.4.2). p_lines holds p_ol_cnt lines of 14 digits each: item id
-- (6), supply warehouse (6), quantity (2), sorted by (supply warehouse, item)
-- with the unused item of a rolled-back order last; p_distinct says whether
-- no two lines name the same stock row. Instructions are few on purpose:
-- MariaDB optimizes every statement of a procedure at every call, and
-- every declared variable is an instruction of its own at every call, so
-- the only variable is the order's id, declared (and set) once it is known.
--
-- The statements that join the lines to their items and stock rows name
-- their join order (STRAIGHT_JOIN: the lines first) and the key each row is
-- found by (FORCE INDEX (PRIMARY)), which is the plan MariaDB picks on its
-- own. Left to choose, in the first second after a restart at 64 users
-- and 10 warehouses, it ran the stock update of six New-Orders as scans:
-- one after the other, each locked 840,000 to 1,010,000 rows (the stock
-- table holds about a million), for 53 s in all, while nearly every other
-- transaction waited. The hints leave it nothing to choose.
CREATE PROCEDURE tpcc_new_order(p_w_id INT, p_d_id INT, p_c_id INT, p_all_local INT, p_entry_d DATETIME,
                                p_ol_cnt INT, p_lines VARCHAR(255), p_distinct INT)
BEGIN
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

    START TRANSACTION;
    -- D_NEXT_O_ID is read and incremented under the district row's lock;
    -- LAST_INSERT_ID(expr) hands the new value back without a second read.
    UPDATE district SET d_next_o_id = LAST_INSERT_ID(d_next_o_id + 1) WHERE d_w_id = p_w_id AND d_id = p_d_id;
    BEGIN
    DECLARE v_o_id INT DEFAULT LAST_INSERT_ID() - 1;
    INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
        VALUES (v_o_id, p_d_id, p_w_id, p_c_id, p_entry_d, NULL, p_ol_cnt, p_all_local);
    INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (v_o_id, p_d_id, p_w_id);
    IF p_distinct THEN
        -- 2.4.2.2: restock by 91 when fewer than 10 would remain. Every line's
        -- stock row in one statement, locked in the lines' (key) order; none
        -- is found for an unused item number.
        UPDATE tpcc_line_no STRAIGHT_JOIN stock FORCE INDEX (PRIMARY)
            ON s_w_id = CAST(SUBSTRING(p_lines, (n - 1) * 14 + 7, 6) AS UNSIGNED)
           AND s_i_id = CAST(SUBSTRING(p_lines, (n - 1) * 14 + 1, 6) AS UNSIGNED)
        SET s_quantity = IF(s_quantity >= CAST(SUBSTRING(p_lines, (n - 1) * 14 + 13, 2) AS UNSIGNED) + 10,
                            s_quantity - CAST(SUBSTRING(p_lines, (n - 1) * 14 + 13, 2) AS UNSIGNED),
                            s_quantity - CAST(SUBSTRING(p_lines, (n - 1) * 14 + 13, 2) AS UNSIGNED) + 91),
            s_ytd = s_ytd + CAST(SUBSTRING(p_lines, (n - 1) * 14 + 13, 2) AS UNSIGNED),
            s_order_cnt = s_order_cnt + 1,
            s_remote_cnt = s_remote_cnt + IF(s_w_id <> p_w_id, 1, 0)
        WHERE n <= p_ol_cnt;
        IF ROW_COUNT() < p_ol_cnt THEN
            -- 2.4.2.3: "Item number is not valid"; the handler rolls back.
            SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = 31001, MESSAGE_TEXT = 'new-order rolled back: unused item';
        END IF;
    ELSE
        -- A stock row named twice is updated once per line, one line at a
        -- time (rare: its counter is the only variable of this branch).
        BEGIN
        DECLARE v_i INT DEFAULT 1;
        WHILE v_i <= p_ol_cnt DO
            UPDATE stock SET
                s_quantity = IF(s_quantity >= CAST(SUBSTRING(p_lines, (v_i - 1) * 14 + 13, 2) AS UNSIGNED) + 10,
                                s_quantity - CAST(SUBSTRING(p_lines, (v_i - 1) * 14 + 13, 2) AS UNSIGNED),
                                s_quantity - CAST(SUBSTRING(p_lines, (v_i - 1) * 14 + 13, 2) AS UNSIGNED) + 91),
                s_ytd = s_ytd + CAST(SUBSTRING(p_lines, (v_i - 1) * 14 + 13, 2) AS UNSIGNED),
                s_order_cnt = s_order_cnt + 1,
                s_remote_cnt = s_remote_cnt + IF(s_w_id <> p_w_id, 1, 0)
                WHERE s_w_id = CAST(SUBSTRING(p_lines, (v_i - 1) * 14 + 7, 6) AS UNSIGNED)
                  AND s_i_id = CAST(SUBSTRING(p_lines, (v_i - 1) * 14 + 1, 6) AS UNSIGNED);
            IF ROW_COUNT() = 0 THEN
                SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = 31001, MESSAGE_TEXT = 'new-order rolled back: unused item';
            END IF;
            SET v_i = v_i + 1;
        END WHILE;
        END;
    END IF;
    -- Every item is valid: the lines, with each item's price and the
    -- district's S_DIST_xx, in one statement.
    INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
                            ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
        SELECT v_o_id, p_d_id, p_w_id, n, i_id, s_w_id, NULL, CAST(SUBSTRING(p_lines, (n - 1) * 14 + 13, 2) AS UNSIGNED),
               CAST(SUBSTRING(p_lines, (n - 1) * 14 + 13, 2) AS UNSIGNED) * i_price,
               CASE p_d_id WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04
                           WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08
                           WHEN 9 THEN s_dist_09 ELSE s_dist_10 END
        FROM tpcc_line_no
        STRAIGHT_JOIN item FORCE INDEX (PRIMARY) ON i_id = CAST(SUBSTRING(p_lines, (n - 1) * 14 + 1, 6) AS UNSIGNED)
        STRAIGHT_JOIN stock FORCE INDEX (PRIMARY) ON s_w_id = CAST(SUBSTRING(p_lines, (n - 1) * 14 + 7, 6) AS UNSIGNED) AND s_i_id = i_id
        WHERE n <= p_ol_cnt;
    -- The terminal's output, read inside the transaction: the order's total
    -- with W_TAX, D_TAX and C_DISCOUNT (the warehouse, district and customer
    -- rows joined once, each a single row, so MIN is their value), each
    -- line's amount and brand-generic flag, and what the terminal only
    -- displays (C_LAST, C_CREDIT). It is kept in session variables and sent
    -- after the COMMIT: sent before, it reached the client ahead of the
    -- commit's status, which then came after the log flush, and the client
    -- waited for the socket twice a transaction.
    SELECT STRAIGHT_JOIN ROUND(SUM(ol_amount) * (1 - MIN(c_discount)) * (1 + MIN(w_tax) + MIN(d_tax)), 2),
           GROUP_CONCAT(ol_amount ORDER BY ol_number),
           GROUP_CONCAT(IF(INSTR(i_data, 'ORIGINAL') > 0 AND INSTR(s_data, 'ORIGINAL') > 0, 'B', 'G') ORDER BY ol_number SEPARATOR ''),
           CONCAT_WS('|', MIN(c_last), MIN(c_credit))
        INTO @tpcc_total, @tpcc_amounts, @tpcc_brand, @tpcc_shown
        FROM warehouse, district, customer,
             order_line JOIN item FORCE INDEX (PRIMARY) ON i_id = ol_i_id JOIN stock FORCE INDEX (PRIMARY) ON s_w_id = ol_supply_w_id AND s_i_id = ol_i_id
        WHERE w_id = p_w_id AND d_w_id = p_w_id AND d_id = p_d_id
          AND c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id
          AND ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id = v_o_id;
    COMMIT;
    SELECT v_o_id, @tpcc_total, @tpcc_amounts, @tpcc_brand, @tpcc_shown;
    END;
END
//
DROP PROCEDURE IF EXISTS tpcc_payment
//
-- Payment (2.5.2). p_c_last is NULL when the customer is selected by id;
-- by name, p_c_id (a parameter is a local variable) takes the id found, so
-- that the procedure declares no variable: each would be an instruction at
-- every call. What the terminal displays and nothing computes with (names,
-- addresses, phone, dates, limits) is sent as one column.
CREATE PROCEDURE tpcc_payment(p_w_id INT, p_d_id INT, p_c_w_id INT, p_c_d_id INT, p_c_id INT, p_c_last VARCHAR(16),
                              p_amount DECIMAL(6,2), p_date DATETIME)
BEGIN
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

    START TRANSACTION;
    -- The customer first, the warehouse last: every Payment of a warehouse
    -- updates its one row, so that row's lock is the warehouse's queue.
    -- Taken last, it is held for the history row, the output and the commit
    -- alone, never
    -- while this transaction waits for a customer (a Delivery may hold one)
    -- or a district (a New-Order holds its district's); and since every
    -- transaction that locks a customer, district or warehouse row takes
    -- them in this order, or takes only one of them, no cycle can form.
    IF p_c_last IS NOT NULL THEN
        -- The customer at position ceil(n/2) of those with that last name,
        -- by first name; NULL when there is none.
        SELECT CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(GROUP_CONCAT(c_id ORDER BY c_first), ',', (COUNT(*) + 1) DIV 2), ',', -1) AS UNSIGNED)
            INTO p_c_id
            FROM customer WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_last = p_c_last;
        IF p_c_id IS NULL THEN
            SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = 31002, MESSAGE_TEXT = 'no customer with that last name';
        END IF;
    END IF;
    -- A bad-credit customer's C_DATA gets the payment's details in front,
    -- kept to 500 characters. The update locks the row; the read after it
    -- sees the transaction's own change.
    UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
                        c_payment_cnt = c_payment_cnt + 1,
                        c_data = IF(c_credit = 'BC',
                                    LEFT(CONCAT(p_c_id, ' ', p_c_d_id, ' ', p_c_w_id, ' ', p_d_id, ' ', p_w_id, ' ', p_amount, ' | ', c_data), 500),
                                    c_data)
        WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = p_c_id;
    UPDATE district SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w_id AND d_id = p_d_id;
    UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w_id;
    -- H_DATA is W_NAME and D_NAME separated by four spaces. The rows it
    -- reads are the ones this transaction has locked and updated.
    INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
        SELECT p_c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, p_date, p_amount, CONCAT(w_name, '    ', d_name)
        FROM warehouse, district WHERE w_id = p_w_id AND d_w_id = p_w_id AND d_id = p_d_id;
    -- The terminal's output, read inside the transaction and sent after its
    -- COMMIT, as New-Order's is.
    SELECT c_credit, c_balance, IF(c_credit = 'BC', LEFT(c_data, 200), NULL),
           CONCAT_WS('|', w_name, w_street_1, w_street_2, w_city, w_state, w_zip,
                     d_name, d_street_1, d_street_2, d_city, d_state, d_zip,
                     c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since,
                     c_credit_lim, c_discount)
        INTO @tpcc_credit, @tpcc_balance, @tpcc_data, @tpcc_shown
        FROM warehouse, district, customer
        WHERE w_id = p_w_id AND d_w_id = p_w_id AND d_id = p_d_id
          AND c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = p_c_id;
    COMMIT;
    SELECT p_c_id, @tpcc_credit, @tpcc_balance, @tpcc_data, @tpcc_shown;
END
//
DROP PROCEDURE IF EXISTS tpcc_order_status
//
-- Order-Status (2.6.2), in a read-only transaction so that the customer, the
-- order and its lines come from one snapshot. The first result set is the
-- customer and the customer's most recent order, the second the order's lines.
-- By name, p_c_id takes the id found, as in Payment.
CREATE PROCEDURE tpcc_order_status(p_w_id INT, p_d_id INT, p_c_id INT, p_c_last VARCHAR(16))
BEGIN
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

    START TRANSACTION READ ONLY;
    IF p_c_last IS NOT NULL THEN
        SELECT CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(GROUP_CONCAT(c_id ORDER BY c_first), ',', (COUNT(*) + 1) DIV 2), ',', -1) AS UNSIGNED)
            INTO p_c_id
            FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_c_last;
        IF p_c_id IS NULL THEN
            SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = 31002, MESSAGE_TEXT = 'no customer with that last name';
        END IF;
    END IF;
    BEGIN
    DECLARE v_o_id INT DEFAULT (SELECT MAX(o_id) FROM orders WHERE o_w_id = p_w_id AND o_d_id = p_d_id AND o_c_id = p_c_id);
    SELECT c_id, c_balance, c_first, c_middle, c_last, o_id, o_entry_d, o_carrier_id
        FROM customer LEFT JOIN orders ON o_w_id = c_w_id AND o_d_id = c_d_id AND o_id = v_o_id
        WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;
    SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d
        FROM order_line WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id = v_o_id;
    COMMIT;
    END;
END
//
DROP PROCEDURE IF EXISTS tpcc_delivery
//
-- Delivery (2.7.4): the ten districts of a warehouse in one transaction
-- (2.7.4.1 allows one to ten), one district after the other. Each
-- district's statements are single-table and find their rows by primary
-- key, so that a row another transaction holds is met as an ordinary lock
-- wait on that row: a multi-table UPDATE of the orders joined to their
-- customers for all districts at once was seen running for minutes
-- instead of waiting on a locked customer (issue 31).
CREATE PROCEDURE tpcc_delivery(p_w_id INT, p_carrier_id INT, p_date DATETIME)
BEGIN
    DECLARE v_d_id INT DEFAULT 1;
    DECLARE v_delivered INT DEFAULT 0;
    DECLARE v_o_id INT;
    -- Each district's oldest undelivered order as the transaction's
    -- snapshot saw it, 8 digits each, 0 where there was none.
    DECLARE v_first VARCHAR(80);
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

    START TRANSACTION;
    -- A plain read, without locks. The deletes below start at these ids:
    -- a locking scan from a district's first key would lock the gap in
    -- front of its first row, where the district before it inserts its new
    -- orders, and every New-Order of that district (and, through the
    -- district rows those hold, its Payments and the warehouse row) would
    -- wait for this Delivery's commit. Started at an existing key the
    -- delete locks that row alone. The first id by ORDER BY ... LIMIT 1,
    -- not MIN(): MariaDB reads a MIN() correlated with the outer row's
    -- district as every row of the district (some 900, measured with
    -- Handler_read_next), where the index's first entry is the answer.
    SELECT GROUP_CONCAT(LPAD(IFNULL((SELECT no_o_id FROM new_order WHERE no_w_id = p_w_id AND no_d_id = n ORDER BY no_o_id LIMIT 1), 0), 8, '0')
                        ORDER BY n SEPARATOR '')
        INTO v_first FROM tpcc_line_no WHERE n <= 10;
    WHILE v_d_id <= 10 DO
        -- The district's oldest undelivered order, read (LAST_INSERT_ID(expr)
        -- keeps the id of the row the delete reached first, which is the
        -- one it deletes) and deleted under one lock; the lock read sees the
        -- latest rows, so an order another Delivery took since the snapshot
        -- is passed over. No row: 2.7.4.2, the district's delivery is
        -- skipped.
        DELETE FROM new_order WHERE no_w_id = p_w_id AND no_d_id = v_d_id
            AND no_o_id >= CAST(SUBSTRING(v_first, v_d_id * 8 - 7, 8) AS UNSIGNED)
            AND CAST(SUBSTRING(v_first, v_d_id * 8 - 7, 8) AS UNSIGNED) > 0
            AND LAST_INSERT_ID(no_o_id) >= 0
            ORDER BY no_o_id LIMIT 1;
        IF ROW_COUNT() = 1 THEN
            SET v_o_id = LAST_INSERT_ID(), v_delivered = v_delivered + 1;
            -- The order's carrier; LAST_INSERT_ID(expr) hands back its
            -- O_C_ID (the one row the key finds) without a read of its own.
            UPDATE orders SET o_carrier_id = p_carrier_id
                WHERE o_w_id = p_w_id AND o_d_id = v_d_id AND o_id = v_o_id AND LAST_INSERT_ID(o_c_id) >= 0;
            UPDATE order_line SET ol_delivery_d = p_date
                WHERE ol_w_id = p_w_id AND ol_d_id = v_d_id AND ol_o_id = v_o_id;
            -- The customer credited with the sum of the order's lines, which
            -- this transaction has just locked.
            UPDATE customer SET c_balance = c_balance + IFNULL((SELECT SUM(ol_amount) FROM order_line
                                                                WHERE ol_w_id = p_w_id AND ol_d_id = v_d_id AND ol_o_id = v_o_id), 0),
                                c_delivery_cnt = c_delivery_cnt + 1
                WHERE c_w_id = p_w_id AND c_d_id = v_d_id AND c_id = LAST_INSERT_ID();
        END IF;
        SET v_d_id = v_d_id + 1;
    END WHILE;
    COMMIT;
    SELECT v_delivered, 10 - v_delivered;
END
//
DROP PROCEDURE IF EXISTS tpcc_stock_level
//
-- Stock-Level (2.8.2): distinct items of the district's last 20 orders whose
-- stock is below the threshold, in one statement: outside a transaction it
-- reads one snapshot (2.8.2.3 asks no more), so it needs no START
-- TRANSACTION, COMMIT or handler. The district is a single row found by
-- its key, read first, so D_NEXT_O_ID bounds the order lines' range.
CREATE PROCEDURE tpcc_stock_level(p_w_id INT, p_d_id INT, p_threshold INT)
BEGIN
    SELECT COUNT(DISTINCT s_i_id)
        FROM district
        JOIN order_line ON ol_w_id = d_w_id AND ol_d_id = d_id AND ol_o_id >= d_next_o_id - 20 AND ol_o_id < d_next_o_id
        JOIN stock ON s_w_id = d_w_id AND s_i_id = ol_i_id
        WHERE d_w_id = p_w_id AND d_id = p_d_id AND s_quantity < p_threshold;
END
